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

/** P22: what a probe carries from one pass to the next (its workflow keeps it; a new run starts from `PROBE_START`). */
export interface ProbeMemo {
  /** The last pass found nothing parked (the probe ends on the second such pass, with no ramp running). */
  emptyOnce: boolean;
  /** The first reading that found the circuit closed (ms): the release ramps from it. */
  closedAt?: number;
  /** P16: passes in a row that found the circuit still open: the next waits 1 s, 2 s, 4 s… */
  failedProbes: number;
  /** P16: the open streak's start (failing_since), to tell a short outage. */
  streakFrom: number | null;
}

export const PROBE_START: ProbeMemo = { emptyOnce: false, failedProbes: 0, streakFrom: null };

/** P22: what one pass of the probe did (src/activities/parking.ts probePass). */
export interface ProbePass {
  done: boolean;
  released: number;
  failed: number;
  memo: ProbeMemo;
  /** The timer before the next pass (ms). */
  waitMs: number;
}

/** P13/P16/P22: what one pass does with what it read; the wait after it is `waitMs` (a release's, from its start). */
export type ProbeStep =
  | { kind: 'expire-all' } // the endpoint is disabled (or unknown): its parked deliveries are failed, the probe ends
  | { kind: 'done' } // nothing parked twice a tick apart and no ramp running
  | { kind: 'wait'; waitMs: number } // nothing parked once: look again a tick later
  | { kind: 'probe'; waitMs: number } // open: fail what the schedule outlived, send the oldest, wait 1 s, 2 s, 4 s…
  | { kind: 'release'; waitMs: number; closedAt: number; outageMs?: number }; // closed: release the ramp's allowance

/**
 * The probe's decision for one pass, from the rows' reading and the memo (pure: the workflow's old path and the one
 * activity of P22 take the same decisions). Empty twice a tick apart, because a fan-out that saw the last parked row
 * may still be committing one behind it; and no ramp running, because the fan-out parks while it does.
 */
export function decideProbeStep(
  state: ParkedState,
  memo: ProbeMemo,
  ticks: Pick<EndpointProbeInput, 'probeEveryMs' | 'releaseTickMs'>,
): { step: ProbeStep; memo: ProbeMemo } {
  if (state.disabled) return { step: { kind: 'expire-all' }, memo };
  if (state.parked === 0 && memo.emptyOnce && !state.ramping) return { step: { kind: 'done' }, memo };
  if (state.parked === 0) return { step: { kind: 'wait', waitMs: ticks.releaseTickMs }, memo: { ...memo, emptyOnce: true } };
  if (state.open) {
    const streakFrom = state.failingSince ?? memo.streakFrom;
    const waitMs = probeWaitMs(memo.failedProbes, ticks.probeEveryMs);
    const next: ProbeMemo = { emptyOnce: false, failedProbes: memo.failedProbes + 1, streakFrom };
    return { step: { kind: 'probe', waitMs }, memo: next };
  }
  const closedAt = memo.closedAt ?? state.at;
  const outageMs = memo.streakFrom !== null ? closedAt - memo.streakFrom : undefined;
  const next: ProbeMemo = { emptyOnce: false, failedProbes: 0, streakFrom: memo.streakFrom, closedAt };
  return { step: { kind: 'release', waitMs: ticks.releaseTickMs, closedAt, ...(outageMs !== undefined && { outageMs }) }, memo: next };
}
