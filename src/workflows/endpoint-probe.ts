// P13: one endpoint's probe while its circuit is open, and the release of its parked deliveries once it is closed.
// Open: fail what the retry schedule has outlived, send the oldest parked delivery (the probe: attempt 1 by the
// batched steps, a failure going on in its own workflow), sleep in a durable timer: 1 s, 2 s, 4 s… up to probe_every
// (P16: a circuit a burst opened on a blip closes within seconds). Closed (a 2xx ended the streak): release the recovery
// ramp's allowance each release_tick. Done when nothing is parked and no ramp runs; a disabled endpoint's parked
// deliveries are failed. P22: a pass is one activity (probePass) and a timer: two workflow tasks a pass, not four.
// Deterministic and thin: every decision is `decideProbeStep` over an activity's reading of the rows
// (src/shared/endpoint-probe.ts, src/activities/parking.ts).
import { continueAsNew, patched, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ParkingActivities } from '../activities/parking.js';
import { decideProbeStep, PROBE_START, type EndpointProbeInput } from '../shared/endpoint-probe.js';
import { NON_RETRYABLE_ERROR_TYPES } from '../shared/failures.js';
import { PROBE_ONE_PASS } from './patches.js';

const steps = proxyActivities<ParkingActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES],
  },
});

type ProbeResult = { released: number; failed: number };

export async function endpointProbeWorkflow(input: EndpointProbeInput): Promise<ProbeResult> {
  return patched(PROBE_ONE_PASS) ? probeInPasses(input) : probeInSteps(input);
}

/** P22: each pass one activity, then its timer. */
async function probeInPasses(input: EndpointProbeInput): Promise<ProbeResult> {
  const total: ProbeResult = { released: 0, failed: 0 };
  let memo = PROBE_START;
  for (;;) {
    const pass = await steps.probePass(input, memo);
    total.released += pass.released;
    total.failed += pass.failed;
    if (pass.done) return total;
    memo = pass.memo;
    await sleep(pass.waitMs);
    if (workflowInfo().continueAsNewSuggested) return continueAsNew<typeof endpointProbeWorkflow>(input);
  }
}

/** Before P22 (histories: test/fixtures/histories/pre-p22/): the reading, the expiry and the release as three activities. */
async function probeInSteps(input: EndpointProbeInput): Promise<ProbeResult> {
  const total: ProbeResult = { released: 0, failed: 0 };
  let memo = PROBE_START;
  for (;;) {
    const decided = decideProbeStep(await steps.parkedState(input.endpointId), memo, input);
    const { step } = decided;
    memo = decided.memo;
    if (step.kind === 'expire-all') {
      total.failed += await steps.expireParked(input.endpointId, true);
      return total;
    }
    if (step.kind === 'done') return total;
    if (step.kind === 'wait') {
      await sleep(step.waitMs);
      continue;
    }
    if (step.kind === 'probe') {
      total.failed += await steps.expireParked(input.endpointId, false);
      total.released += await steps.releaseParked(input.endpointId, 'probe', input.probeEveryMs);
      await sleep(step.waitMs);
    } else {
      const tickFrom = Date.now();
      total.released += await steps.releaseParked(input.endpointId, 'release', input.releaseTickMs, step.closedAt, step.outageMs);
      // The release spreads its sends over most of the tick (P16): the tick counts from its start.
      await sleep(Math.max(1, step.waitMs - (Date.now() - tickFrom)));
    }
    if (workflowInfo().continueAsNewSuggested) return continueAsNew<typeof endpointProbeWorkflow>(input);
  }
}
