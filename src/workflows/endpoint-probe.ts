// P13: one endpoint's probe while its circuit is open, and the release of its parked deliveries once it is closed.
// Open: fail what the retry schedule has outlived, send the oldest parked delivery (the probe: attempt 1 by the
// batched steps, a failure going on in its own workflow), sleep in a durable timer: 1 s, 2 s, 4 s… up to probe_every
// (P16: a circuit a burst opened on a blip closes within seconds). Closed (a 2xx ended the streak): release the recovery
// ramp's allowance each release_tick. Done when nothing is parked and no ramp runs; a disabled endpoint's parked
// deliveries are failed.
// Deterministic and thin: every decision is an activity's reading of the rows (src/activities/parking.ts).
import { continueAsNew, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ParkingActivities } from '../activities/parking.js';
import { probeWaitMs, type EndpointProbeInput } from '../shared/endpoint-probe.js';
import { NON_RETRYABLE_ERROR_TYPES } from '../shared/failures.js';

const steps = proxyActivities<ParkingActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES],
  },
});

export async function endpointProbeWorkflow(input: EndpointProbeInput): Promise<{ released: number; failed: number }> {
  let released = 0;
  let failed = 0;
  let emptyOnce = false;
  let closedAt: number | undefined; // the first reading that found the circuit closed: the release ramps from it
  let failedProbes = 0; // P16: probes that found the circuit still open, in a row: the next waits 1 s, 2 s, 4 s…
  let streakFrom: number | null = null; // P16: the open streak's start (failing_since), to tell a short outage
  for (;;) {
    const state = await steps.parkedState(input.endpointId);
    if (state.disabled) {
      failed += await steps.expireParked(input.endpointId, true);
      return { released, failed };
    }
    // Empty twice a tick apart (a fan-out that saw the last parked row may still be committing one behind it), and no
    // ramp running (the fan-out parks while it does).
    if (state.parked === 0 && emptyOnce && !state.ramping) return { released, failed };
    emptyOnce = state.parked === 0;
    if (emptyOnce) {
      await sleep(input.releaseTickMs);
      continue;
    }
    closedAt = state.open ? undefined : (closedAt ?? state.at);
    if (state.open) {
      streakFrom = state.failingSince ?? streakFrom;
      failed += await steps.expireParked(input.endpointId, false);
      released += await steps.releaseParked(input.endpointId, 'probe', input.probeEveryMs);
      await sleep(probeWaitMs(failedProbes++, input.probeEveryMs));
    } else {
      failedProbes = 0;
      const outageMs = closedAt !== undefined && streakFrom !== null ? closedAt - streakFrom : undefined;
      const tickFrom = Date.now();
      released += await steps.releaseParked(input.endpointId, 'release', input.releaseTickMs, closedAt, outageMs);
      // The release spreads its sends over most of the tick (P16): the tick counts from its start.
      await sleep(Math.max(1, input.releaseTickMs - (Date.now() - tickFrom)));
    }
    if (workflowInfo().continueAsNewSuggested) return continueAsNew<typeof endpointProbeWorkflow>(input);
  }
}
