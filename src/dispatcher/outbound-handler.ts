// The dispatcher's batch handler (O1–O5): quarantine bad envelopes, dedupe on evt_ id, fan out event + deliveries
// in one transaction, start one workflow per delivery, and only then let the consumer commit the offsets.
import type { Client } from '@temporalio/client';
import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { deliveries, events, quarantinedMessages, webhookEndpoints } from '../db/schema/index.js';
import type { BatchHandler, RawMessage } from '../kafka/types.js';
import type { Logger } from '../lib/logger.js';
import { deliveriesCreated, eventsDispatched, messagesQuarantined } from '../metrics/outbound.js';
import { newId } from '../shared/ids.js';
import { parseEnvelope, type ValidEvent } from './envelope.js';
import { startDeliveryWorkflows, type DeliveryToStart } from './start-deliveries.js';

export interface OutboundHandlerDeps {
  db: Db;
  temporal: Client;
  taskQueue: string;
  profile: Profile;
  logger: Logger;
  startConcurrency?: number;
  eagerStart?: boolean;
  firstAttempt?: 'local' | 'activity';
}

interface Positioned<T> {
  message: RawMessage;
  value: T;
}

export function subscribes(eventTypes: string[], type: string): boolean {
  return eventTypes.includes('*') || eventTypes.includes(type);
}

export function createOutboundBatchHandler(deps: OutboundHandlerDeps): BatchHandler {
  const { db, logger } = deps;
  return async (batch) => {
    const bad: Positioned<{ reason: string; detail?: string }>[] = [];
    const good = new Map<string, Positioned<ValidEvent>>(); // first occurrence of an evt_ id in the batch wins
    for (const message of batch.messages) {
      const parsed = parseEnvelope(message.value);
      if (!parsed.ok) bad.push({ message, value: { reason: parsed.reason, detail: parsed.detail } });
      else if (!good.has(parsed.event.eventPublicId)) good.set(parsed.event.eventPublicId, { message, value: parsed.event });
    }

    const outcome = await db.transaction(async (tx) => {
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
              })),
            )
            // O2: a redelivered bad message is set aside once.
            .onConflictDoNothing({ target: [quarantinedMessages.topic, quarantinedMessages.partition, quarantinedMessages.offset] })
            .returning({ reason: quarantinedMessages.reason, offset: quarantinedMessages.offset })
        : [];
      if (good.size === 0) return { quarantined, toStart: [] as DeliveryToStart[], fresh: 0, duplicates: 0, created: 0 };

      const candidates = [...good.values()];
      // O3: the primary key on event_public_id decides; a row that already exists (or is being inserted by another
      // replica, whose commit we wait for) makes this event a duplicate.
      const inserted = await tx
        .insert(events)
        .values(
          candidates.map(({ message, value }) => ({
            eventPublicId: value.eventPublicId,
            merchantAccount: value.merchantAccount,
            type: value.type,
            livemode: value.livemode,
            createdUnix: value.createdUnix,
            body: value.body,
            sourceTopic: message.topic,
            sourcePartition: message.partition,
            sourceOffset: message.offset,
          })),
        )
        .onConflictDoNothing({ target: events.eventPublicId })
        .returning({ id: events.eventPublicId });
      const freshIds = new Set(inserted.map((row) => row.id));
      const fresh = candidates.filter((c) => freshIds.has(c.value.eventPublicId)).map((c) => c.value);
      const duplicateIds = candidates.map((c) => c.value.eventPublicId).filter((id) => !freshIds.has(id));

      // O4: one PENDING delivery per enabled endpoint of the same merchant and livemode subscribed to the type.
      const rows: (typeof deliveries.$inferInsert)[] = [];
      const typeOf = new Map(candidates.map((c) => [c.value.eventPublicId, c.value.type]));
      if (fresh.length) {
        const pairs = [...new Map(fresh.map((e) => [`${e.merchantAccount}\u0000${e.livemode}`, e])).values()];
        const endpoints = await tx
          .select({
            id: webhookEndpoints.id,
            merchantAccount: webhookEndpoints.merchantAccount,
            livemode: webhookEndpoints.livemode,
            eventTypes: webhookEndpoints.eventTypes,
          })
          .from(webhookEndpoints)
          .where(
            and(
              eq(webhookEndpoints.status, 'enabled'),
              isNull(webhookEndpoints.deletedAt),
              or(...pairs.map((e) => and(eq(webhookEndpoints.merchantAccount, e.merchantAccount), eq(webhookEndpoints.livemode, e.livemode)))),
            ),
          );
        for (const event of fresh) {
          for (const endpoint of endpoints) {
            if (endpoint.merchantAccount !== event.merchantAccount || endpoint.livemode !== event.livemode) continue;
            if (!subscribes(endpoint.eventTypes, event.type)) continue;
            rows.push({ id: newId('whd'), eventPublicId: event.eventPublicId, endpointId: endpoint.id, merchantAccount: event.merchantAccount });
          }
        }
        if (rows.length) await tx.insert(deliveries).values(rows);
      }
      const toStart: DeliveryToStart[] = rows.map((row) => ({
        deliveryId: row.id,
        endpointId: row.endpointId,
        merchantAccount: row.merchantAccount,
        eventType: typeOf.get(row.eventPublicId)!,
      }));
      if (duplicateIds.length) {
        // O3: a duplicate still ensures its workflows exist. Only PENDING ones can lack one: any other status was
        // written by a running workflow.
        const existing = await tx
          .select({ id: deliveries.id, endpointId: deliveries.endpointId, merchantAccount: deliveries.merchantAccount, type: events.type })
          .from(deliveries)
          .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
          .where(and(inArray(deliveries.eventPublicId, duplicateIds), eq(deliveries.status, 'PENDING')));
        for (const row of existing) {
          toStart.push({ deliveryId: row.id, endpointId: row.endpointId, merchantAccount: row.merchantAccount, eventType: row.type });
        }
      }
      return { quarantined, toStart, fresh: fresh.length, duplicates: duplicateIds.length, created: rows.length };
    });

    for (const row of outcome.quarantined) messagesQuarantined.inc({ reason: row.reason });
    for (const { message, value } of bad) {
      logger.warn({ topic: message.topic, partition: message.partition, offset: message.offset, reason: value.reason, detail: value.detail }, 'envelope quarantined');
    }
    eventsDispatched.inc({ result: 'new' }, outcome.fresh);
    eventsDispatched.inc({ result: 'duplicate' }, outcome.duplicates);
    deliveriesCreated.inc(outcome.created);

    // O5: after the commit, before the offsets: a crash here means redelivery, and the duplicate path above
    // starts whatever is still missing.
    const started = await startDeliveryWorkflows(
      { temporal: deps.temporal, taskQueue: deps.taskQueue, profile: deps.profile, concurrency: deps.startConcurrency, eager: deps.eagerStart, firstAttempt: deps.firstAttempt },
      outcome.toStart,
    );
    logger.debug(
      { topic: batch.topic, partition: batch.partition, messages: batch.messages.length, fresh: outcome.fresh, duplicates: outcome.duplicates, deliveries: outcome.created, started },
      'batch dispatched',
    );
  };
}
