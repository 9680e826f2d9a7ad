// O19: removing an event's body — by an admin now (`POST /admin/v1/events/{id}/expunge`, audited), or by the
// retention sweep once the profile's `retention.bodies` has passed since it was received. The body and its
// attempts' response excerpts go; the event row (id, type, account, times), its deliveries and attempts (statuses,
// HTTP codes, latencies, timestamps) stay, so the event can still be explained. The inbound registry (I5) is not
// touched. An expunged event cannot be sent again: its retry and recover answer 409, an attempt fails with why.
import { and, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import { scopeOf, type Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts, events } from '../db/schema/index.js';
import type { Executor } from './secrets.js';

/** R4: a delivery of an expunged event: deterministic until never, so not retried. */
export class EventExpungedError extends Error {
  override name = 'EventExpungedError';
  constructor(
    readonly eventId: string,
    readonly expungedAt: Date | null,
    readonly reason: string | null,
  ) {
    super(
      `event ${eventId} was expunged${expungedAt ? ` at ${expungedAt.toISOString()}` : ''} (${reason ?? 'no reason'}): its body is gone, so it cannot be sent again`,
    );
  }
}

export type ExpungeReason = 'retention' | `operator: ${string}`;

/** Blanks the bodies of `eventIds` still holding one, in the caller's transaction; the ids it blanked. */
async function blank(tx: Executor, eventIds: string[], reason: string, at: Date): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const done = await tx
    .update(events)
    .set({ body: null, expungedAt: at, expungeReason: reason })
    .where(and(inArray(events.eventPublicId, eventIds), isNull(events.expungedAt)))
    .returning({ id: events.eventPublicId });
  const ids = done.map((d) => d.id);
  if (ids.length > 0) {
    await tx
      .update(deliveryAttempts)
      .set({ responseExcerpt: null })
      .where(
        inArray(
          deliveryAttempts.deliveryId,
          tx.select({ id: deliveries.id }).from(deliveries).where(inArray(deliveries.eventPublicId, ids)),
        ),
      );
  }
  return ids;
}

export class EventNotFoundError extends Error {
  override name = 'EventNotFoundError';
}

/**
 * An admin's expunge of one event, audited with who and why. Idempotent: an event already expunged is returned as
 * it is (and not audited again). A merchant key only finds its own account's events.
 */
export async function expungeEvent(db: Db, principal: Principal, eventId: string, reason: string, now: Date = new Date()) {
  return db.transaction(async (tx) => {
    const account = scopeOf(principal);
    const [row] = await tx
      .select({ id: events.eventPublicId, expungedAt: events.expungedAt, expungeReason: events.expungeReason })
      .from(events)
      .where(and(eq(events.eventPublicId, eventId), account === undefined ? undefined : eq(events.merchantAccount, account)))
      .for('update');
    if (!row) throw new EventNotFoundError(`event ${eventId} does not exist`);
    if (row.expungedAt) return { eventId, expungedAt: row.expungedAt, reason: row.expungeReason, already: true };
    const stored = `operator: ${reason}`;
    await blank(tx, [eventId], stored, now);
    await recordAuditEvent(tx, {
      actor: actorOf(principal),
      action: 'event.expunge',
      target: { type: 'event', id: eventId },
      after: { expunged_at: now.toISOString(), reason },
    });
    return { eventId, expungedAt: now, reason: stored, already: false };
  });
}

/**
 * One bounded batch of the retention sweep: the oldest `batch` events received before `cutoff` that still have a
 * body, claimed with SKIP LOCKED (several workers sweep disjoint rows). Returns how many it expunged.
 */
export async function sweepExpiredBodies(db: Db, cutoff: Date, batch: number, now: Date = new Date()): Promise<number> {
  return db.transaction(async (tx) => {
    const claimed = await tx
      .select({ id: events.eventPublicId })
      .from(events)
      .where(and(isNull(events.expungedAt), lt(events.receivedAt, cutoff)))
      .orderBy(events.receivedAt)
      .limit(batch)
      .for('update', { skipLocked: true });
    return (
      await blank(
        tx,
        claimed.map((c) => c.id),
        'retention',
        now,
      )
    ).length;
  });
}

/** Whether an event's body is gone, and since when: what retry and recover check before they re-queue. */
export async function expungedEventOf(
  db: Executor,
  deliveryId: string,
): Promise<{ eventId: string; expungedAt: Date; reason: string | null } | null> {
  const [row] = await db
    .select({ eventId: events.eventPublicId, expungedAt: events.expungedAt, reason: events.expungeReason })
    .from(deliveries)
    .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
    .where(and(eq(deliveries.id, deliveryId), sql`${events.expungedAt} is not null`));
  return row ? { eventId: row.eventId, expungedAt: row.expungedAt!, reason: row.reason } : null;
}
