// The smoke slice: proves Kafka → dispatcher → Temporal → activity → PostgreSQL end to end, and durable timers.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { SmokeActivities } from '../activities/smoke.js';

const { recordSmokeRun } = proxyActivities<SmokeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5 },
});

export interface SmokeInput {
  runId: string;
  note: string;
  /** Workflow time to wait before writing, e.g. '12h' in the time-skipping test. */
  sleep?: string;
}

export async function smokeWorkflow(input: SmokeInput): Promise<{ runId: string; writtenAt: string }> {
  if (input.sleep) await sleep(input.sleep as `${number}h`);
  return recordSmokeRun(input);
}
