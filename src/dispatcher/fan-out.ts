// One transaction of the dispatcher (O2–O4): quarantine rows for bad envelopes, then the events (deduplicated on
// their evt_ id) and one PENDING delivery per subscribed endpoint. The handler calls it for a whole batch and, when
// the database refuses the data, for parts of it (R1). R18: the event row keeps the trace of its message. P13: a
// delivery to an endpoint whose circuit is open is parked (parked_since), not handed to a workflow. P14: the two
// multi-row INSERTs bind one array per column (./fan-out-rows.ts).
import { and, eq, inArray, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { CATALOG } from '../catalog/catalog.js';
import { namesOtherVersion, subscribesTo } from '../catalog/subscriptions.js';
import { versionSkips } from '../metrics/outbound.js';
import type { Db, Tx } from '../db/client.js';
import { deliveries, events, quarantinedMessages, webhookEndpoints } from '../db/schema/index.js';
import type { RawMessage } from '../kafka/types.js';
import { newId } from '../shared/ids.js';
import { insertDeliveries, insertEvents, type DeliveryRow } from './fan-out-rows.js';
import type { ValidEvent } from '../outbound/envelope.js';
import type { DeliveryToStart, Handoff } from '../outbound/delivery-start.js';
import { needsDeliveryWorkflow, type LaneSettings } from '../outbound/lanes.js';
import { routingRateSql, type RecoverySettings } from '../outbound/recovery.js';
import { parks, type CircuitSettings } from '../outbound/circuit.js';
import { takeSequence } from '../outbound/sequencing.js';

export interface Positioned<T> {
  message: RawMessage;
  value: T;
}

/** `recorded`: the detail kept in the quarantine row (O21's schema path and message; other details are only logged). */
export type Refusal = { reason: string; detail?: string; recorded?: string };

export interface FanOutOutcome {
  quarantined: { reason: string; offset: string }[];
  toStart: DeliveryToStart[];
  fresh: number;
  duplicates: number;
  created: number;
  /** P13: endpoints this transaction parked deliveries for (their circuit is open); each needs its probe workflow. */
  parkedEndpoints: string[];
  parked: number;
}

/** O4, M8: `*`, a prefix wildcard (`payment.*`) or the type itself (src/catalog/subscriptions.ts). */
export function subscribes(eventTypes: string[], type: string): boolean {
  return subscribesTo(eventTypes, type);
}

export interface FanOutOptions {
  /** P1 batched mode: new deliveries carry handoff_since (the dispatcher owns them until DELIVERED or a workflow). */
  handoff?: boolean;
  /** With handoff: endpoints that need their workflow from attempt 1 (M2 slow lane, M3 ordering, M5 throttle). */
  lanes?: LaneSettings;
  /** P12: with lanes, an endpoint whose recovery ramp runs also needs its workflow (the ramp is a throttle). */
  recovery?: RecoverySettings;
  /** P13: park the deliveries of an endpoint whose circuit is open (./circuit.ts) instead of attempting them. */
  circuit?: CircuitSettings;
  /** R18: the traceparent the event row keeps and its deliveries start under; default the message's header. */
  traceparentOf?: (message: RawMessage) => string | null;
}

export function fanOut(db: Db, bad: Positioned<Refusal>[], good: Positioned<ValidEvent>[], options: FanOutOptions = {}): Promise<FanOutOutcome> {
  const traceparentOf = options.traceparentOf ?? ((message: RawMessage) => message.headers.traceparent ?? null);
  return db.transaction(async (tx) => {
    const quarantined = bad.length
      ? await tx
          .insert(quarantinedMessages)
          .values(
            bad.map(({ message, value }) => ({
              topic: message.topic,
              partition: message.partition,
              offset: message.offset,
              key: message.key,
              raw: message.value,
              reason: value.reason,
              detail: value.recorded ?? null,
            })),
          )
          // O2: a redelivered bad message is set aside once.
          .onConflictDoNothing({ target: [quarantinedMessages.topic, quarantinedMessages.partition, quarantinedMessages.offset] })
          .returning({ reason: quarantinedMessages.reason, offset: quarantinedMessages.offset })
      : [];
    if (good.length === 0) return { quarantined, toStart: [] as DeliveryToStart[], fresh: 0, duplicates: 0, created: 0, parkedEndpoints: [], parked: 0 };

    const candidates = good;
    // O3: the primary key on event_public_id decides; a row that already exists (or is being inserted by another
    // replica, whose commit we wait for) makes this event a duplicate.
    const freshIds = await insertEvents(tx, candidates.map(({ message, value }) => ({ message, value, traceparent: traceparentOf(message) })));
    const fresh = candidates.filter((c) => freshIds.has(c.value.eventPublicId)).map((c) => c.value);
    const duplicateIds = candidates.map((c) => c.value.eventPublicId).filter((id) => !freshIds.has(id));

    // O4: one PENDING delivery per enabled endpoint of the same merchant and livemode subscribed to the type.
    const rows: DeliveryRow[] = [];
    const typeOf = new Map(candidates.map((c) => [c.value.eventPublicId, c.value.type]));
    const referenceOf = new Map(candidates.map((c) => [c.value.eventPublicId, c.value.paymentReference])); // O20
    const traceOf = new Map(candidates.map((c) => [c.value.eventPublicId, traceparentOf(c.message)])); // R18
    const now = new Date();
    const parkedEndpoints = new Set<string>(); // P13
    const sent = new Map<string, Handoff>(); // P1: by delivery id, what its first attempt sends (batched mode)
    if (fresh.length) {
      // P14: one array parameter for the batch's merchants (an OR of one condition per merchant and livemode cost
      // PostgreSQL ~1 ms of planning per delivery with 10,000 merchants); the livemode is matched below.
      const accounts = [...new Set(fresh.map((e) => e.merchantAccount))];
      const endpoints = await tx
        .select({
          id: webhookEndpoints.id,
          merchantAccount: webhookEndpoints.merchantAccount,
          livemode: webhookEndpoints.livemode,
          eventTypes: webhookEndpoints.eventTypes,
          ordering: webhookEndpoints.ordering,
          rateLimitPerSecond: options.recovery ? routingRateSql(options.recovery) : webhookEndpoints.rateLimitPerSecond,
          ownRate: webhookEndpoints.rateLimitPerSecond,
          recoveringSince: webhookEndpoints.recoveringSince, // P13: parks() reads the ramp from it
          consecutiveFailures: webhookEndpoints.consecutiveFailures,
          failingSince: webhookEndpoints.failingSince,
          // P13: deliveries parked for it still wait; a new one queues behind them (released oldest first, at the ramp).
          // Qualified through the table: in a one-table select drizzle writes a column unqualified, and an unqualified "id" in
          // the subquery is the delivery's own — an always-false scan of every parked row on each fan-out (P19).
          hasParked: sql<boolean>`exists (select 1 from ${deliveries} p where p.endpoint_id = ${webhookEndpoints}.id and p.parked_since is not null)`,
          url: webhookEndpoints.url,
        })
        .from(webhookEndpoints)
        .where(
          and(
            eq(webhookEndpoints.status, 'enabled'),
            isNull(webhookEndpoints.deletedAt),
            sql`${webhookEndpoints.merchantAccount} = any(${sql.param(accounts)}::text[])`,
          ),
        );
      // P14: each event meets only its merchant's endpoints of its livemode (not every endpoint the batch loaded).
      const key = (account: string, livemode: boolean) => `${account}\u0000${livemode}`;
      const byMerchant = new Map<string, typeof endpoints>();
      for (const e of endpoints) {
        const list = byMerchant.get(key(e.merchantAccount, e.livemode));
        if (list) list.push(e);
        else byMerchant.set(key(e.merchantAccount, e.livemode), [e]);
      }
      for (const event of fresh) {
        for (const endpoint of byMerchant.get(key(event.merchantAccount, event.livemode)) ?? []) {
          const latest = CATALOG.get(event.type)?.version;
          if (!subscribesTo(endpoint.eventTypes, event.type, event.version, latest)) {
            // M9: subscribed to the type in another version: not delivered, and visible as a count by type and version.
            if (namesOtherVersion(endpoint.eventTypes, event.type, event.version, latest)) versionSkips.inc({ type: event.type, version: String(event.version) });
            continue;
          }
          const id = newId('whd');
          if (options.circuit && parks(endpoint, options.circuit, options.recovery, now.getTime())) {
            // P13: parked — no workflow, no POST, until the endpoint's probe releases it.
            rows.push({ id, eventPublicId: event.eventPublicId, endpointId: endpoint.id, merchantAccount: event.merchantAccount, parkedSince: now });
            parkedEndpoints.add(endpoint.id);
            continue;
          }
          const owned = options.handoff === true && !(options.lanes && needsDeliveryWorkflow(endpoint, options.lanes));
          // P1/P13: in batched mode every new delivery carries the hand-off marker, the ones that need their workflow
          // from attempt 1 too: their starts then run behind the offsets, and the sweep covers a crash meanwhile.
          rows.push({ id, eventPublicId: event.eventPublicId, endpointId: endpoint.id, merchantAccount: event.merchantAccount, ...(options.handoff === true ? { handoffSince: now } : {}) });
          if (owned) {
            sent.set(id, { status: 'PENDING', attemptCount: 0, nextAttemptAt: null, body: event.body, url: endpoint.url, endpointStatus: 'enabled' });
          }
        }
      }
      await numberOrdered(tx, rows, new Set(endpoints.filter((e) => e.ordering === 'per_endpoint').map((e) => e.id)));
      await insertDeliveries(tx, rows);
    }
    const toStart: DeliveryToStart[] = rows.filter((row) => !row.parkedSince).map((row) => ({
      deliveryId: row.id,
      endpointId: row.endpointId,
      merchantAccount: row.merchantAccount,
      eventType: typeOf.get(row.eventPublicId)!,
      ...(referenceOf.get(row.eventPublicId) ? { paymentReference: referenceOf.get(row.eventPublicId)! } : {}),
      ...(sent.has(row.id!) ? { handoff: sent.get(row.id!)! } : row.handoffSince ? { priorAttempts: 0 } : {}),
      traceparent: traceOf.get(row.eventPublicId) ?? null,
    }));
    if (duplicateIds.length) {
      // O3: a duplicate still ensures its workflows exist. Only PENDING ones can lack one (any other status was
      // written by a running workflow), and, in batched mode (P1), those the dispatcher has not handed off yet.
      const existing = await tx
        .select({
          id: deliveries.id,
          endpointId: deliveries.endpointId,
          merchantAccount: deliveries.merchantAccount,
          type: events.type,
          status: deliveries.status,
          attemptCount: deliveries.attemptCount,
          nextAttemptAt: deliveries.nextAttemptAt,
          handoffSince: deliveries.handoffSince,
          body: events.body,
          url: webhookEndpoints.url,
          endpointStatus: webhookEndpoints.status,
          traceparent: events.traceparent,
        })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, deliveries.endpointId))
        .where(and(inArray(deliveries.eventPublicId, duplicateIds), or(eq(deliveries.status, 'PENDING'), isNotNull(deliveries.handoffSince)), isNull(deliveries.parkedSince)));
      for (const row of existing) {
        if (row.status === 'DELIVERED') continue;
        const { id: deliveryId, endpointId, merchantAccount, type: eventType, traceparent } = row;
        // O19: a body expunged meanwhile is no hand-off: the workflow's attempt finds it gone and fails with why.
        const handoff = row.handoffSince && row.body ? { handoff: { ...row, body: row.body } } : {};
        toStart.push({ deliveryId, endpointId, merchantAccount, eventType, traceparent, ...handoff });
      }
    }
    return { quarantined, toStart, fresh: fresh.length, duplicates: duplicateIds.length, created: rows.length, parkedEndpoints: [...parkedEndpoints], parked: rows.filter((row) => row.parkedSince).length };
  });
}

/**
 * M3: the deliveries to an ordered endpoint get consecutive sequence numbers in event order (the batch's order, i.e.
 * the partition's). takeSequence locks the endpoint row until this transaction commits, so a concurrent dispatcher
 * numbers its own after ours.
 */
async function numberOrdered(tx: Tx, rows: DeliveryRow[], ordered: Set<string>): Promise<void> {
  if (ordered.size === 0) return;
  const perEndpoint = new Map<string, DeliveryRow[]>();
  for (const row of rows) if (ordered.has(row.endpointId)) perEndpoint.set(row.endpointId, [...(perEndpoint.get(row.endpointId) ?? []), row]);
  for (const [endpointId, list] of [...perEndpoint].sort(([a], [b]) => a.localeCompare(b))) {
    const first = await takeSequence(tx, endpointId, list.length);
    list.forEach((row, i) => (row.sequence = first + i));
  }
}
