// The baseline's workflow: one activity, nothing else — the cheapest useful Temporal workflow.
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(n: number): Promise<number> }>({ startToCloseTimeout: '10 seconds' });

export async function baselineWorkflow(n: number): Promise<number> {
  return noop(n);
}
