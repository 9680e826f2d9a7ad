// P13: what the dispatcher, the hand-off sweep and the worker agree on about an endpoint's probe workflow: its name,
// its id (one per endpoint, so a start is idempotent) and its input. The input names the endpoint only: every
// decision (open or closed, what to release, what has expired) is read from the endpoint's and deliveries' rows.
export const ENDPOINT_PROBE_WORKFLOW = 'endpointProbeWorkflow';

export const endpointProbeWorkflowId = (endpointId: string) => `endpoint-probe-${endpointId}`;

export interface EndpointProbeInput {
  endpointId: string;
  /** outbound.circuit.probe_every and release_tick at start (a later profile change applies to the next run). */
  probeEveryMs: number;
  releaseTickMs: number;
}

/** What one pass of the probe found on the rows (src/activities/parking.ts). */
export interface ParkedState {
  parked: number;
  open: boolean;
  /** O13: a disabled endpoint's parked deliveries are failed, not released. */
  disabled: boolean;
  /** P12: the endpoint's recovery ramp still runs (new deliveries are parked meanwhile): the probe stays. */
  ramping: boolean;
  /** When the activity read the rows (ms): the probe keeps the first reading that found the circuit closed. */
  at: number;
  /** P16: the start of the endpoint's failure streak (ms; O13 failing_since), null when it has none. */
  failingSince?: number | null;
}

/** P16: the first probe after the circuit opened waits this long, each next one twice as long, up to probe_every. */
export const FIRST_PROBE_MS = 1000;

/** P16: the wait after the `failedProbes`-th probe in a row that found the circuit still open (0: the first). */
export function probeWaitMs(failedProbes: number, probeEveryMs: number): number {
  return Math.min(probeEveryMs, FIRST_PROBE_MS * 2 ** Math.min(30, Math.max(0, failedProbes)));
}
