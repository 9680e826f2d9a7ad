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
}
