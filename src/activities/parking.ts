// P13: the steps of an endpoint's probe workflow (src/workflows/endpoint-probe.ts), read from and written to the rows:
// the circuit's state and the parked count, the release of the oldest parked deliveries (one, as the probe, while the
// circuit is open; the recovery ramp's allowance per tick once it is closed) through the batched first-attempt steps
// (../outbound/first-attempts.ts: a workflow only for a delivery whose attempt fails), and the failing of parked deliveries the retry schedule has outlived. R20: the start
// input is an endpoint id only, and a probe runs only under the workflow id that endpoint derives. P18: the probe
// runs on its own task queue; the deliveries it sends or wakes belong to the delivery queue beside it. P22: a pass of
// the probe is one activity (probePass) over the three steps.
import { Context } from '@temporalio/activity';
import type { Db } from '../db/client.js';
import type { Profile } from '../config/profile.js';
import type { Logger } from '../lib/logger.js';
import type { SecretKeys } from '../shared/keyring.js';
import { circuitOpen, MAX_RELEASE_PER_TICK, parkedDeadline, rampRunning, releaseAllowance } from '../outbound/circuit.js';
import { releaseParkedRetries } from '../outbound/delivery-start.js';
import { createFirstAttempts } from '../outbound/first-attempts.js';
import { createParkingStore, type ParkedRetry } from '../outbound/parking-store.js';
import {
  decideProbeStep,
  endpointProbeWorkflowId,
  type EndpointProbeInput,
  type ParkedState,
  type ProbeMemo,
  type ProbePass,
} from '../shared/endpoint-probe.js';
import { deliveryQueueOf } from '../shared/task-queues.js';

/** P16: a time since recovery later than any ramp's end (rampRate caps its doublings), for a short outage's backlog. */
const PAST_ANY_RAMP_MS = Number.MAX_SAFE_INTEGER;
/** P16: the release's slices are this far apart (a tick of 1 s: ten). */
const RELEASE_SLICE_MS = 100;
/** The `i`-th of `n` near-equal slices of `items`, in order. */
const slice = <T>(items: T[], i: number, n: number): T[] =>
  items.slice(Math.floor((items.length * i) / n), Math.floor((items.length * (i + 1)) / n));

export function createParkingActivities(deps: { db: Db; profile: Profile; logger: Logger; secretsKey: SecretKeys }) {
  const store = createParkingStore(deps.db);
  const { circuit, recovery, retry_schedule: schedule } = deps.profile.outbound;
  // One sender per delivery queue (its signer cache and connection pools live as long as the worker), with the
  // worker's client. P18: a probe runs on its delivery queue's probe queue; the deliveries it starts, on the former.
  const senders = new Map<string, ReturnType<typeof createFirstAttempts>>();
  const senderFor = ({ client, info }: Context) => {
    const taskQueue = deliveryQueueOf(info.taskQueue);
    let sender = senders.get(taskQueue);
    if (!sender)
      senders.set(
        taskQueue,
        (sender = createFirstAttempts({ ...deps, start: { temporal: client, taskQueue, profile: deps.profile } })),
      );
    return sender;
  };
  /** P15: parked retries: their waiting workflows are signalled (each then attempts at once), then unparked. */
  const wake = async (retrying: ParkedRetry[]) => {
    if (retrying.length === 0) return;
    const { client, info } = Context.current();
    await releaseParkedRetries({ temporal: client, taskQueue: deliveryQueueOf(info.taskQueue), profile: deps.profile }, retrying);
    await store.unpark(retrying.map((r) => r.deliveryId));
  };
  const ownWorkflow = (endpointId: string) =>
    Context.current().info.workflowExecution?.workflowId === endpointProbeWorkflowId(endpointId);
  const activities = {
    /** The endpoint's circuit and parked count; an unknown endpoint or a foreign workflow id has nothing to probe. */
    async parkedState(endpointId: string): Promise<ParkedState> {
      const row = typeof endpointId === 'string' && ownWorkflow(endpointId) ? await store.probeRow(endpointId) : null;
      const at = Date.now();
      if (!row) return { parked: 0, open: false, disabled: false, ramping: false, at };
      const disabled = row.status !== 'enabled' || row.deleted;
      const ramping = rampRunning(recovery, { recoveringSince: row.recoveringSince, ownRate: row.rateLimitPerSecond }, at);
      const failingSince = row.failingSince?.getTime() ?? null;
      return { parked: row.parked, open: circuitOpen(row, circuit, at), disabled, ramping, at, failingSince };
    },

    /**
     * Sends the oldest parked deliveries: one when `as` is 'probe', else the allowance of one release tick at the
     * recovery ramp (from the endpoint's recovering_since, or from `closedAt`, when the probe first found the circuit
     * closed: an endpoint that was down long enough to open it always ramps) or its own rate. P16: after an outage of
     * `outageMs` shorter than `ramp_after` (a burst opened the circuit) the backlog leaves at the ramp's top rate, as
     * a streak that short starts no ramp (P12). Resolves to how many.
     */
    async releaseParked(
      endpointId: string,
      as: 'probe' | 'release',
      tickMs: number,
      closedAt?: number,
      outageMs?: number,
    ): Promise<number> {
      const row = ownWorkflow(endpointId) ? await store.probeRow(endpointId) : null;
      if (!row || row.parked === 0) return 0;
      const short = typeof outageMs === 'number' && outageMs < recovery.ramp_after;
      const since = Math.max(row.recoveringSince?.getTime() ?? -Infinity, (!short && closedAt) || -Infinity);
      // Short: past any ramp (its top rate), unless an earlier outage's ramp still runs.
      let sinceRecoveryMs: number | null = null;
      if (Number.isFinite(since)) sinceRecoveryMs = Date.now() - since;
      else if (short && closedAt !== undefined) sinceRecoveryMs = PAST_ANY_RAMP_MS;
      const limit =
        as === 'probe' ? 1 : releaseAllowance(tickMs, recovery, { rateLimitPerSecond: row.rateLimitPerSecond, sinceRecoveryMs });
      const { owned, retrying } = await store.take(endpointId, limit, { freshFirst: as === 'probe' });
      // P1's steps: sign, reserve attempt 1, POST, record; only a delivery that did not succeed gets its workflow.
      const sender = senderFor(Context.current());
      // P16: a tick's allowance goes out in slices spread over most of the tick, not as one burst of up to 500 POSTs
      // at its start (bench:outage: that burst, at the ramp's top, was the healthy merchants' worst recovery p99).
      const slices =
        as === 'probe' ? 1 : Math.max(1, Math.min(owned.length + retrying.length, Math.floor(tickMs / RELEASE_SLICE_MS)));
      for (let i = 0; i < slices; i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, RELEASE_SLICE_MS));
        await wake(slice(retrying, i, slices));
        const { batchable, workflows } = sender.split(slice(owned, i, slices));
        await sender.send(batchable, workflows);
      }
      return owned.length + retrying.length;
    },

    /**
     * Fails the parked deliveries older than the retry schedule (all of them for a disabled endpoint); how many. P15:
     * parked retries end by their workflows' own deadlines; a disabled endpoint's are released, so each workflow's
     * attempt records why nothing was sent and ends FAILED.
     */
    async expireParked(endpointId: string, all: boolean): Promise<number> {
      if (!ownWorkflow(endpointId)) return 0;
      const failed = all
        ? await store.fail(endpointId, null, 'endpoint disabled while its deliveries were parked (circuit open)')
        : await store.fail(
            endpointId,
            new Date(parkedDeadline(schedule, Date.now())),
            'parked for the whole retry schedule: the endpoint never answered 2xx (circuit open)',
          );
      if (failed) deps.logger.warn({ endpointId, failed }, 'parked deliveries failed');
      for (let left = all; left;) {
        const { retrying } = await store.take(endpointId, MAX_RELEASE_PER_TICK, { retriesOnly: true });
        await wake(retrying);
        left = retrying.length > 0;
      }
      return failed;
    },

    /**
     * P22: one pass of the probe in one activity (a workflow task for it, one for its timer): reads the rows, decides
     * with `decideProbeStep`, and fails, probes or releases as decided; resolves to the memo for the next pass and
     * the wait before it (a release's from its start, so the tick keeps its length). The three steps above stay for
     * the runs started before P22, which replay them.
     */
    async probePass(input: EndpointProbeInput, memo: ProbeMemo): Promise<ProbePass> {
      const { endpointId } = input;
      const { step, memo: next } = decideProbeStep(await activities.parkedState(endpointId), memo, input);
      const pass = { done: false, released: 0, failed: 0, memo: next, waitMs: 0 };
      switch (step.kind) {
        case 'expire-all':
          return { ...pass, done: true, failed: await activities.expireParked(endpointId, true) };
        case 'done':
          return { ...pass, done: true };
        case 'wait':
          return { ...pass, waitMs: step.waitMs };
        case 'probe': {
          const failed = await activities.expireParked(endpointId, false);
          const released = await activities.releaseParked(endpointId, 'probe', input.probeEveryMs);
          return { ...pass, failed, released, waitMs: step.waitMs };
        }
        case 'release': {
          const tickFrom = Date.now();
          const released = await activities.releaseParked(endpointId, 'release', input.releaseTickMs, step.closedAt, step.outageMs);
          // The release spreads its sends over most of the tick (P16): the tick counts from its start.
          return { ...pass, released, waitMs: Math.max(1, step.waitMs - (Date.now() - tickFrom)) };
        }
      }
    },
  };
  return activities;
}

export type ParkingActivities = ReturnType<typeof createParkingActivities>;
