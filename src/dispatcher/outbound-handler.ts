// The dispatcher's batch handler (O1–O5, R1): quarantine bad envelopes, dedupe on evt_ id, fan out event +
// deliveries in one transaction, start one workflow per delivery (P1 batched mode: send the first attempts here and
// start workflows only for retries, src/outbound/first-attempts.ts), and only then let the consumer commit the offsets. P2: in
// batched mode with outbound.batched.pipeline_depth > 0, the first attempts of what the dispatcher owns run on behind
// the offsets (./pipeline.ts): the fan-out commit already made the hand-off sweep responsible for them.
// R1: when the database refuses the data of a batch, the batch is split until the refused message stands alone; it
// is quarantined with the SQLSTATE as its reason and the rest is committed. Any other database failure (connection,
// timeout) fails the batch, which the consumer retries without committing its offsets. R18: every message gets a
// consumer span, child of the `traceparent` in its headers; the event row keeps it and its deliveries start under it.
// P9: the partition batches of one fetch are handled together (outbound.coalesce_batches, ./coalesce.ts).
// P13: a delivery to an endpoint whose circuit is open is parked by the fan-out; its endpoint's probe workflow is
// started (idempotently) before the offsets are committed (the hand-off sweep starts any a crash left out).
// O21: a well-formed envelope whose data.object does not match its catalog schema (or whose type or version is not
// in the catalog) is quarantined like a malformed one, with the schema path and message, and delivered to no one.
import type { Client } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { describeDbError, isDataError, safeError } from '../db/errors.js';
import type { BatchHandler, MessageBatch, RawMessage } from '../kafka/types.js';
import { contextFrom, openSpan, SpanKind, type OpenSpan } from '../tracing/context.js';
import type { Logger } from '../lib/logger.js';
import { deliveriesCreated, deliveriesParked, eventsDispatched, messagesQuarantined, schemaRefusals } from '../metrics/outbound.js';
import { CATALOG } from '../catalog/catalog.js';
import { createEventValidator } from '../catalog/validate.js';
import type { SecretKeys } from '../shared/keyring.js';
import type { PinnedAgents } from '../outbound/pinned-agents.js';
import type { LookupAll } from '../outbound/url-safety.js';
import { parseEnvelope, type ValidEvent } from '../outbound/envelope.js';
import { fanOut, type FanOutOptions, type FanOutOutcome, type Positioned, type Refusal } from './fan-out.js';
import { createFirstAttempts, type Owned, type Stage } from '../outbound/first-attempts.js';
import { coalesceBatches } from './coalesce.js';
import { createPipeline } from './pipeline.js';
import { handOff, type StartOptions } from '../outbound/delivery-start.js';
import { createProbeStarter } from '../outbound/probe-start.js';
import { createBackgroundStarts } from './background-starts.js';

export { subscribes } from './fan-out.js';

export interface OutboundHandlerDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  profile: Profile;
  logger: Logger;
  startConcurrency?: number;
  eagerStart?: boolean;
  firstAttempt?: 'local' | 'activity';
  /** P1: what the batched mode's own first attempts need (required when outbound.delivery_mode is batched). */
  secretsKey?: SecretKeys;
  lookup?: LookupAll;
  agents?: PinnedAgents;
  observe?: (stage: Stage | 'fan_out', ms: number, count: number) => void;
}

/** The batch handler, and `drain()`: resolves once no first attempt is in hand (call it after the consumer stopped). */
export type OutboundBatchHandler = BatchHandler & { drain(): Promise<void> };

export function createOutboundBatchHandler(deps: OutboundHandlerDeps): OutboundBatchHandler {
  const { db, logger } = deps;
  const batched = deps.profile.outbound.delivery_mode === 'batched';
  const start: StartOptions = {
    temporal: deps.temporal,
    taskQueue: deps.taskQueue,
    profile: deps.profile,
    concurrency: deps.startConcurrency,
    eager: deps.eagerStart,
    firstAttempt: deps.firstAttempt,
  };
  if (batched && !deps.secretsKey) throw new Error('outbound.delivery_mode batched: the dispatcher needs the secrets key to sign');
  // P1 with M2/M3/M5: ordered, throttled and slow-lane endpoints always get their workflow from attempt 1.
  const fanOutOptions: FanOutOptions = { handoff: batched, lanes: deps.profile.outbound.lanes, recovery: deps.profile.outbound.recovery, circuit: deps.profile.outbound.circuit };
  // P13: the probe workflow of every endpoint a batch parked deliveries for. P24: off the batch's path (a start RPC
  // per endpoint every 5 s held the next events behind it); one that fails is the hand-off sweep's to start.
  const probes = createProbeStarter(deps.temporal, deps.taskQueue, deps.profile);
  const probeStarts = new Set<Promise<unknown>>();
  const depth = deps.profile.outbound.batched.pipeline_depth;
  const starts = batched && depth > 0 ? createBackgroundStarts((ds) => handOff(db, start, ds), logger, depth) : null;
  // P17: pipelined, a send's failed first attempts get their workflows behind it (./background-starts.ts): the starts
  // of a merchant that just went down no longer hold one of the pipeline_sends the healthy merchants' POSTs wait for.
  const firstAttempts = batched
    ? createFirstAttempts({ ...deps, secretsKey: deps.secretsKey!, start, ...(starts ? { handOffLater: starts.submit } : {}) })
    : null;
  const pipeline =
    firstAttempts && depth > 0
      ? createPipeline({ depth, maxSends: deps.profile.outbound.batched.pipeline_sends, logger, send: (owned: Owned[]) => firstAttempts.send(owned) })
      : null;

  // O21: compiled once, here, per type and version; `validate: false` skips it (to measure its cost only).
  const { validate, unknown_types: unknownTypes } = deps.profile.outbound.catalog;
  const validator = validate ? createEventValidator(CATALOG) : null;
  const catalogCheck = (event: ValidEvent): Refusal | undefined => {
    if (!validator) return undefined;
    const result = validator.check(event.type, event.version, event.object);
    if (result.ok || (result.reason === 'unknown_event_type' && unknownTypes === 'deliver')) return undefined;
    schemaRefusals.inc({ reason: result.reason, type: CATALOG.get(event.type) ? event.type : 'unknown' });
    return { reason: result.reason, detail: result.detail, recorded: result.detail };
  };

  /** O5 for what needs a workflow now; P2: the owned first attempts go on behind the offsets when pipelined. */
  async function dispatch(toStart: FanOutOutcome['toStart']): Promise<number> {
    if (!firstAttempts) return handOff(db, start, toStart);
    if (!pipeline) return (await firstAttempts.run(toStart)).handedOff;
    const { batchable, workflows } = firstAttempts.split(toStart);
    // P13: the starts of deliveries that carry the hand-off marker run behind the offsets (./background-starts.ts).
    const marked = workflows.filter((d) => d.priorAttempts !== undefined);
    const started = await handOff(db, start, workflows.filter((d) => d.priorAttempts === undefined));
    await starts!.submit(marked);
    if (batchable.length) await pipeline.submit(batchable);
    return started;
  }

  /** One call over the batches of one turn (P9, ./coalesce.ts): one fan-out transaction and one dispatch for all. */
  const handleMany = async (batches: MessageBatch[]) => {
    const spans = new Map<RawMessage, OpenSpan>();
    for (const batch of batches)
      for (const message of batch.messages)
        spans.set(
          message,
          openSpan(`${batch.topic} process`, {
            kind: SpanKind.CONSUMER,
            parent: contextFrom(message.headers),
            attributes: { 'messaging.system': 'kafka', 'messaging.operation.type': 'process', 'messaging.destination.name': batch.topic, 'messaging.destination.partition.id': String(batch.partition), 'messaging.kafka.offset': Number(message.offset) },
          }),
        );
    const traceparentOf = (message: RawMessage) => spans.get(message)?.traceparent ?? null;
    const joined: MessageBatch =
      batches.length === 1 ? batches[0]! : { ...batches[0]!, messages: batches.flatMap((b) => b.messages) };
    try {
      await handle(joined, { ...fanOutOptions, traceparentOf });
      for (const span of spans.values()) span.end();
    } catch (error) {
      for (const span of spans.values()) span.end(error);
      throw error;
    }
  };
  const coalesce = deps.profile.outbound.coalesce_batches;
  const handler: BatchHandler =
    coalesce > 1 ? coalesceBatches(handleMany, { maxMessages: coalesce }) : (batch) => handleMany([batch]);

  const handle = async (batch: Parameters<BatchHandler>[0], fanOutOptions: FanOutOptions) => {
    const fetched = performance.now();
    const bad: Positioned<Refusal>[] = [];
    const good = new Map<string, Positioned<ValidEvent>>(); // first occurrence of an evt_ id in the batch wins
    for (const message of batch.messages) {
      const parsed = parseEnvelope(message.value);
      if (!parsed.ok) {
        bad.push({ message, value: { reason: parsed.reason, detail: parsed.detail } });
        continue;
      }
      const refusal = catalogCheck(parsed.event); // O21: before anyone receives it
      if (refusal) bad.push({ message, value: refusal });
      else if (!good.has(parsed.event.eventPublicId)) good.set(parsed.event.eventPublicId, { message, value: parsed.event });
    }

    const refused: Positioned<Refusal>[] = [];
    const outcome = await commitSplitting(db, bad, [...good.values()], refused, fanOutOptions);
    deps.observe?.('fan_out', performance.now() - fetched, batch.messages.length);

    for (const row of outcome.quarantined) messagesQuarantined.inc({ reason: row.reason });
    for (const { message, value } of [...bad, ...refused]) {
      logger.warn({ topic: message.topic, partition: message.partition, offset: message.offset, reason: value.reason, detail: value.detail }, 'envelope quarantined');
    }
    eventsDispatched.inc({ result: 'new' }, outcome.fresh);
    eventsDispatched.inc({ result: 'duplicate' }, outcome.duplicates);
    deliveriesCreated.inc(outcome.created);

    // O5: after the commit, before the offsets: a crash here means redelivery, and the duplicate path above
    // starts whatever is still missing (P1: or sends it, or the hand-off sweep takes it over).
    const started = await dispatch(outcome.toStart).catch((error: unknown) => {
      throw safeError(error);
    });
    if (outcome.parkedEndpoints.length) {
      deliveriesParked.inc(outcome.parked);
      const ensured = probes
        .ensure(outcome.parkedEndpoints)
        .catch((error: Error) => logger.warn({ error: error.name }, 'probe start failed; the hand-off sweep starts it'))
        .finally(() => probeStarts.delete(ensured));
      probeStarts.add(ensured);
    }
    logger.debug(
      { topic: batch.topic, partitions: [...new Set(batch.messages.map((m) => m.partition))], messages: batch.messages.length, fresh: outcome.fresh, duplicates: outcome.duplicates, deliveries: outcome.created, started },
      'batch dispatched',
    );
  };
  const drainProbes = async () => void (await Promise.all([...probeStarts]));
  return Object.assign(handler, { drain: async () => void (await pipeline?.drain(), await starts?.drain(), await firstAttempts?.drain(), await drainProbes()) });
}

/**
 * R1: commits the fan-out of `bad` and `good`; when the database refuses the data, commits the parts separately,
 * down to single messages, and quarantines a refused valid event (appended to `refused`) as `database_refused_<SQLSTATE>`.
 * Throws (a DatabaseError without parameters) only for failures that are not about the data.
 */
async function commitSplitting(
  db: Db,
  bad: Positioned<Refusal>[],
  good: Positioned<ValidEvent>[],
  refused: Positioned<Refusal>[],
  options: FanOutOptions,
): Promise<FanOutOutcome> {
  try {
    return await fanOut(db, bad, good, options);
  } catch (error) {
    if (!isDataError(error)) throw safeError(error);
    if (bad.length + good.length === 1 && good.length === 1) {
      const summary = describeDbError(error)!;
      const refusal = { message: good[0]!.message, value: { reason: `database_refused_${summary.code}`, detail: summary.message } };
      refused.push(refusal);
      return fanOut(db, [refusal], [], options);
    }
    if (bad.length + good.length === 1) throw safeError(error); // a quarantine row itself refused: not data we can set aside
    type Part = [Positioned<Refusal>[], Positioned<ValidEvent>[]];
    const [first, second]: [Part, Part] =
      bad.length && good.length
        ? [[bad, []], [[], good]]
        : bad.length
          ? [[bad.slice(0, bad.length >> 1), []], [bad.slice(bad.length >> 1), []]]
          : [[[], good.slice(0, good.length >> 1)], [[], good.slice(good.length >> 1)]];
    const a = await commitSplitting(db, first[0], first[1], refused, options);
    const b = await commitSplitting(db, second[0], second[1], refused, options);
    return {
      quarantined: [...a.quarantined, ...b.quarantined],
      parkedEndpoints: [...a.parkedEndpoints, ...b.parkedEndpoints],
      parked: a.parked + b.parked,
      toStart: [...a.toStart, ...b.toStart],
      fresh: a.fresh + b.fresh,
      duplicates: a.duplicates + b.duplicates,
      created: a.created + b.created,
    };
  }
}
