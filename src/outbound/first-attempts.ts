// P1 batched delivery mode: after the fan-out transaction and before the offsets are committed, the dispatcher sends
// the first attempts of the batch itself, in chunks of outbound.batched.concurrency: sign per endpoint, reserve
// attempt 1 of the whole chunk (one INSERT), POST them in parallel, record every 2xx and its DELIVERED row in one
// statement, the failures in one transaction (P21: O13 streak, RETRYING). Only the deliveries that did not succeed get
// a deliveryWorkflow after attempt 1 (P23: unless their endpoint's circuit parks them); a delivered one never costs a
// Temporal round trip. Guarantees and crash windows: docs/outbound.md, "Batched delivery mode".
// P13: an endpoint probe's release of parked deliveries (src/activities/parking.ts) sends through the same steps.
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import type { AttemptOutcome } from './attempt-record.js';
import { createAttemptPath } from './attempt-path.js';
import { isBatchable } from './batchable.js';
import { createFirstAttemptStore, type Reserved } from './first-attempt-store.js';
import type { SecretKeys } from '../shared/keyring.js';
import type { PinnedAgents } from './pinned-agents.js';
import { firstRetryWait } from './retry-policy.js';
import type { LookupAll } from './url-safety.js';
import { contextFrom } from '../tracing/context.js';
import { PENDING, settleWithin } from '../lib/settle.js';
import { createRecorder } from './first-attempt-record.js';
import { createFailedParking } from './failed-parking.js';
import { fromRow, handOff, type DeliveryToStart, type Owned, type StartOptions } from './delivery-start.js';

export type Stage = 'sign' | 'reserve' | 'post' | 'record' | 'handoff';

export interface FirstAttemptDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  secretsKey: SecretKeys;
  start: StartOptions;
  lookup?: LookupAll;
  agents?: PinnedAgents;
  /** Where the time goes (bench): each stage's duration and how many deliveries it covered. */
  observe?: (stage: Stage, ms: number, count: number) => void;
  /** P17: where a send's workflows go instead of being started before it returns (their rows keep the marker). */
  handOffLater?: (workflows: DeliveryToStart[]) => Promise<void>;
}

export interface FirstAttemptResult {
  delivered: number;
  /** Workflows started (or found running; P17: or handed on) for deliveries that need one. */
  handedOff: number;
}
export type { Owned } from './delivery-start.js';

export function createFirstAttempts(deps: FirstAttemptDeps) {
  const { db, profile, logger } = deps;
  const { attempts, sender, counted, observed } = createAttemptPath(deps);
  const store = createFirstAttemptStore(db, profile.outbound.recovery);
  const record = createRecorder({
    path: { attempts, counted, observed },
    store,
    logger,
    firstRetryMs: firstRetryWait(profile.outbound.retry_schedule)!,
    parkOrStart: createFailedParking({ db, start: deps.start, logger }),
  });
  // P2: with pipeline_depth 0 the offsets wait for every first attempt, so the chunk does too.
  const patienceMs = profile.outbound.batched.pipeline_depth > 0 ? profile.outbound.batched.patience : Infinity;
  const lateTasks = new Set<Promise<unknown>>(); // P13: POSTs past the patience, recorded when they end
  const lateDone = { delivered: 0, handedOff: 0 }; // what the late recordings did since the last drain()
  const slow = new Map<string, number>(); // P13/M2: per endpoint, its POSTs past the patience still running here
  const timed = async <T>(stage: Stage, count: number, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      deps.observe?.(stage, performance.now() - started, count);
    }
  };

  type Signer = ((body: Buffer) => Record<string, string>) | null;
  // P9: a signer (an endpoint's signing material, opened) serves this process for outbound.batched.signer_ttl:
  // at a steady rate every small Kafka batch was two secrets queries before its POSTs. A rotation reaches the
  // dispatcher within the TTL; the secret it replaces keeps verifying for the rotation's grace (O9) meanwhile.
  const signerTtlMs = profile.outbound.batched.signer_ttl;
  const recent = new Map<string, { signer: NonNullable<Signer>; until: number }>();
  const remember = (endpointId: string, signer: NonNullable<Signer>, now: number) => {
    if (signerTtlMs <= 0) return;
    if (recent.size >= 10_000) for (const [id, r] of recent) if (r.until <= now) recent.delete(id);
    if (recent.size < 10_000) recent.set(endpointId, { signer, until: now + signerTtlMs });
  };
  /**
   * A signer per endpoint of the chunk (`cache` lives for one send), looked up at once for the endpoints it lacks.
   * A failure (no secret, database down) is null and is not remembered: its deliveries go to their workflow.
   */
  async function signersFor(chunk: Owned[], cache: Map<string, Signer>): Promise<Map<string, Signer>> {
    const now = Date.now();
    const lookup: string[] = [];
    for (const endpointId of new Set(chunk.map((d) => d.endpointId))) {
      if (cache.has(endpointId)) continue;
      const kept = recent.get(endpointId);
      if (kept && kept.until > now) cache.set(endpointId, kept.signer);
      else lookup.push(endpointId);
    }
    // P14: one query for all the endpoints the chunk lacks (./signing-materials.ts).
    const found = await sender.signers(lookup, new Date()).catch((error: Error) => new Map(lookup.map((id) => [id, error])));
    for (const [endpointId, signer] of found) {
      if (signer instanceof Error) {
        logger.warn({ endpointId, error: signer.name }, 'batched first attempt: signing failed; the workflow attempts instead');
        cache.set(endpointId, null);
      } else {
        cache.set(endpointId, signer);
        remember(endpointId, signer, now);
      }
    }
    return cache;
  }

  /** One chunk: what it delivered, and the deliveries that need a workflow (and from where). */
  async function sendChunk(
    chunk: Owned[],
    cache: Map<string, Signer>,
  ): Promise<{ delivered: number; workflows: DeliveryToStart[] }> {
    const workflows: DeliveryToStart[] = [];
    // Sign before reserving, as the activity does: a failure leaves no attempt behind, and the delivery's workflow
    // makes attempt 1 with the activity's own error handling (R4).
    const signers = await timed('sign', chunk.length, () => signersFor(chunk, cache));
    const at = new Date();
    const signable = chunk.filter((d) => signers.get(d.endpointId));
    workflows.push(...chunk.filter((d) => !signers.get(d.endpointId)).map((d) => fromRow(d, d.handoff)));

    // O7: attempt 1 is reserved before its POST; a delivery whose attempt 1 already exists is never POSTed here.
    const reserved = await timed('reserve', signable.length, () =>
      store.reserve(
        signable.map((d) => d.deliveryId),
        at,
      ),
    );
    const attemptIds = new Map(reserved.map((r: Reserved) => [r.deliveryId, r.attemptId]));
    const lost = signable.filter((d) => !attemptIds.has(d.deliveryId));
    if (lost.length) {
      const existing = await store.existingFirst(lost.map((d) => d.deliveryId));
      const youngSince = at.getTime() - profile.outbound.batched.handoff_grace;
      for (const d of lost) {
        const first = existing.get(d.deliveryId);
        // In flight since recently: another dispatcher (a rebalance) is sending it; it, or the sweep, hands it off.
        if (first?.inFlight && first.startedAt.getTime() >= youngSince) continue;
        workflows.push(fromRow(d, d.handoff)); // the workflow's attempt 1 finds the row: re-applied or `interrupted`
      }
    }
    const mine = signable.filter((d) => attemptIds.has(d.deliveryId));

    // R18: each POST joins the trace of the Kafka message its event came in (contextFrom the kept traceparent).
    const posts = mine.map((d) =>
      sender
        .send(
          { endpointId: d.endpointId, url: d.handoff.url },
          d.handoff.body,
          signers.get(d.endpointId)!(d.handoff.body),
          contextFrom(d.traceparent),
        )
        .catch((error: Error) => {
          // Not an answer (the activity would throw and be retried): the workflow records this attempt `interrupted`.
          logger.warn({ deliveryId: d.deliveryId, error: error.name }, 'batched first attempt threw; handed to its workflow');
          return null;
        }),
    );
    const settled = await timed('post', mine.length, () => settleWithin(posts, patienceMs));
    const ready = mine.filter((_, i) => settled[i] !== PENDING);
    if (ready.length < mine.length) {
      const late = mine.map((d, i) => [d, posts[i]!] as const).filter((_, i) => settled[i] === PENDING);
      for (const [d] of late) slow.set(d.endpointId, (slow.get(d.endpointId) ?? 0) + 1);
      const lateOnes = late.map(([d]) => d);
      const task = Promise.all(late.map(([, p]) => p))
        .then((outcomes) => record(lateOnes, attemptIds, outcomes, at))
        .then(({ delivered, workflows }) => {
          lateDone.delivered += delivered;
          lateDone.handedOff += workflows.length;
          return handOff(db, deps.start, workflows);
        })
        .catch((error: Error) =>
          logger.warn(
            { error: error.name, deliveries: late.length },
            'late first attempts not recorded; the hand-off sweep takes them over',
          ),
        )
        .finally(() => {
          lateTasks.delete(task);
          for (const [d] of late) {
            const left = slow.get(d.endpointId)! - 1;
            if (left > 0) slow.set(d.endpointId, left);
            else slow.delete(d.endpointId);
          }
        });
      lateTasks.add(task);
    }
    return timed('record', ready.length, async () => {
      const result = await record(ready, attemptIds, settled.filter((o) => o !== PENDING) as (AttemptOutcome | null)[], at);
      return { delivered: result.delivered, workflows: [...workflows, ...result.workflows] };
    });
  }

  /** The deliveries it may send itself, and the others as the workflows they need (from where their row stands). */
  function split(deliveries: DeliveryToStart[]): { batchable: Owned[]; workflows: DeliveryToStart[] } {
    const batchable: Owned[] = [];
    const workflows: DeliveryToStart[] = [];
    for (const d of deliveries) {
      const owned = d.handoff;
      if (
        owned &&
        owned.status === 'PENDING' &&
        isBatchable({ id: d.endpointId, url: owned.url, status: owned.endpointStatus }) &&
        !slow.has(d.endpointId) // M2: an endpoint hanging right now goes to its workflows (the slow lane)
      ) {
        batchable.push(d as Owned);
      } else {
        workflows.push(owned ? fromRow(d, owned) : d);
      }
    }
    return { batchable, workflows };
  }

  /** Sends `batchable` chunk by chunk, then starts (or, P17, hands on) a workflow for each one not DELIVERED. */
  async function send(batchable: Owned[], workflows: DeliveryToStart[] = []): Promise<FirstAttemptResult> {
    let delivered = 0;
    const size = profile.outbound.batched.concurrency;
    const signers = new Map<string, Signer>();
    for (let i = 0; i < batchable.length; i += size) {
      const result = await sendChunk(batchable.slice(i, i + size), signers);
      delivered += result.delivered;
      workflows.push(...result.workflows);
    }
    if (deps.handOffLater) await deps.handOffLater(workflows);
    else await timed('handoff', workflows.length, () => handOff(db, deps.start, workflows));
    return { delivered, handedOff: workflows.length };
  }

  return {
    split,
    send,
    /** Resolves once no POST past the patience is still running (shutdown, tests): to what those did meanwhile. */
    drain: async (): Promise<FirstAttemptResult> => {
      while (lateTasks.size) await Promise.all([...lateTasks]);
      const done = { ...lateDone };
      lateDone.delivered = lateDone.handedOff = 0;
      return done;
    },
    /** Sends what it owns and may batch, starts a workflow for everything else; resolves once all are handed off. */
    async run(deliveries: DeliveryToStart[]): Promise<FirstAttemptResult> {
      const { batchable, workflows } = split(deliveries);
      return send(batchable, workflows);
    },
  };
}
