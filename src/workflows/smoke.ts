// The smoke slice: proves Kafka → dispatcher → Temporal → activity → PostgreSQL end to end, and durable timers.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { SmokeActivities } from '../activities/smoke.js';
import type { SmokeInput } from '../shared/smoke.js';

const { recordSmokeRun } = proxyActivities<SmokeActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 5 },
});

export type { SmokeInput };

export async function smokeWorkflow(input: SmokeInput): Promise<{ runId: string; writtenAt: string }> {
  if (input.sleep) await sleep(input.sleep as `${number}h`);
  return recordSmokeRun(input);
}
