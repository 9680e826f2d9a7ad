// The audit log (A3): one immutable row per state-changing admin call, written in the same transaction as the
// change. Who (key id, name, role), what (action, target), before and after (never a secret), request id, via.
import { sql } from 'drizzle-orm';
import { check, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const auditEvents = pgTable(
  'audit_events',
  {
    id: text('id').primaryKey(), // aud_<ulid>: sorts in creation order (the list's cursor)
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
    /** apk_… or bootstrap; null only for a change no ApiPay credential made (a Temporal signal, A4). */
    actorKeyId: text('actor_key_id'),
    actorName: text('actor_name').notNull(),
    actorRole: text('actor_role'),
    action: text('action').notNull(), // endpoint.update, reconciliation.resolve, …
    targetType: text('target_type').notNull(),
    targetId: text('target_id').notNull(),
    before: jsonb('before').$type<Record<string, unknown>>(),
    after: jsonb('after').$type<Record<string, unknown>>(),
    requestId: text('request_id'),
    /** A24 (migration 0031): the X-Request-Id the client sent; request_id is always the server's. */
    clientRequestId: text('client_request_id'),
    via: text('via').notNull(),
    /** A12 (migration 0018): the person behind actor_key_id, filled by a trigger; null for bootstrap and Temporal. */
    actorPrincipalId: text('actor_principal_id'),
    actorPerson: text('actor_person'),
  },
  (t) => [
    check('audit_events_via_ck', sql`${t.via} in ('api', 'temporal')`),
    index('audit_events_at_idx').on(t.at),
    index('audit_events_actor_idx').on(t.actorKeyId),
    index('audit_events_action_idx').on(t.action),
    index('audit_events_target_idx').on(t.targetType, t.targetId),
  ],
);
