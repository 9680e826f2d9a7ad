// The smoke workflow's input, shared by the workflow, its activity and the dispatcher's handler.
export interface SmokeInput {
  runId: string;
  note: string;
  /** Workflow time to wait before writing, e.g. '12h' in the time-skipping test. */
  sleep?: string;
}
