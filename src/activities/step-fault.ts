// R13 test hook: kills this worker process at the dangerous instant of a workflow step — right after the step's
// own write (`written`) or after its answer was journaled (`journaled`), before the workflow task holding the step
// completes — so a test can prove the re-run of that task leaves the database as the durable history says.
// Off unless APIPAY_FAULT_AFTER_STEP is set (src/config/env.ts refuses it in production):
//   <activity>[#n][@written|@journaled]   e.g. postLedgerTransaction@written, recordReconciliationTransition#3
// The n-th matching step of this process (default the first) sends SIGKILL to the process: nothing after it runs.

import { STEP_FAULT_SPEC } from '../config/env.js';

export type StepFaultPoint = 'written' | 'journaled';
export type StepFault = (point: StepFaultPoint, step: { activity: string; workflowId: string }) => Promise<void>;

export interface StepFaultSpec {
  activity: string;
  point: StepFaultPoint;
  nth: number;
}

export function parseStepFault(spec: string): StepFaultSpec {
  const match = STEP_FAULT_SPEC.exec(spec.trim());
  if (!match)
    throw new Error(`APIPAY_FAULT_AFTER_STEP: expected <activity>[#n][@written|@journaled], got ${JSON.stringify(spec)}`);
  return { activity: match[1]!, point: (match[3] as StepFaultPoint | undefined) ?? 'written', nth: Number(match[2] ?? 1) };
}

/** The hook for `spec`, or null (production, or unset). `onFault` defaults to SIGKILL of this process. */
export function stepFault(
  spec: string | undefined,
  onFault: () => void = () => process.kill(process.pid, 'SIGKILL'),
): StepFault | null {
  if (!spec) return null;
  const { activity, point, nth } = parseStepFault(spec);
  let seen = 0;
  return async (at, step) => {
    if (at !== point || step.activity !== activity) return;
    seen += 1;
    if (seen !== nth) return;
    process.stderr.write(
      `[fault] APIPAY_FAULT_AFTER_STEP=${spec}: killing the worker after ${activity} (${point}) of ${step.workflowId}\n`,
    );
    onFault();
    await new Promise(() => {}); // SIGKILL lands before anything else of this step runs
  };
}
