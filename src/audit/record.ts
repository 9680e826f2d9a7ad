// The audit log's one writer (A3): `recordAuditEvent(tx, entry)` inside the transaction of the change it records,
// so the row exists exactly when the change does. Before and after are snapshots of what changed; keys that could
// hold a secret or a raw body are dropped here whatever a caller passes (defence in depth).
import type { Db } from '../db/client.js';
import { auditEvents } from '../db/schema/index.js';
import type { AuditActor, AuditPrincipal, AuditVia } from '../shared/audit.js';
import { newId } from '../shared/ids.js';

/** A drizzle handle or a transaction on it. Pass the transaction of the change. */
export type AuditExecutor = Db | Parameters<Parameters<Db['transaction']>[0]>[0];

export type { AuditActor, AuditVia };

/** The admin API's principal as an audit actor (its request id is set by the authentication middleware). */
export const actorOf = (principal: AuditPrincipal, via: AuditVia = 'api'): AuditActor => ({
  keyId: principal.keyId,
  name: principal.name,
  role: principal.role,
  requestId: principal.requestId ?? null,
  via,
});

export type Snapshot = Record<string, unknown>;

export interface AuditEntry {
  actor: AuditActor;
  /** `<target type>.<verb>`: endpoint.update, reconciliation.resolve, api_key.revoke, … */
  action: string;
  target: { type: string; id: string };
  before?: Snapshot | null;
  after?: Snapshot | null;
}

/** Keys never stored in before/after: secrets, tokens, hashes, ciphertexts and bodies. */
const FORBIDDEN_KEY = /secret|token|password|hash|cipher|^body$|raw_?body|excerpt/i;

export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !FORBIDDEN_KEY.test(key))
      .map(([key, v]) => [key, redact(v)]),
  );
}

/**
 * A21: the audit row as a database function takes it (snake_case columns, redacted like every row), for a change
 * whose function writes the row in the same call (migration 0029).
 */
export function auditRow(entry: AuditEntry): Record<string, unknown> {
  return {
    id: newId('aud'),
    actor_key_id: entry.actor.keyId,
    actor_name: entry.actor.name,
    actor_role: entry.actor.role,
    action: entry.action,
    target_type: entry.target.type,
    target_id: entry.target.id,
    before: entry.before ? redact(entry.before) : null,
    after: entry.after ? redact(entry.after) : null,
    request_id: entry.actor.requestId,
    via: entry.actor.via,
  };
}

/** Writes one audit row with `tx` (the change's own transaction); returns its id. */
export async function recordAuditEvent(tx: AuditExecutor, entry: AuditEntry): Promise<string> {
  const id = newId('aud');
  await tx.insert(auditEvents).values({
    id,
    actorKeyId: entry.actor.keyId,
    actorName: entry.actor.name,
    actorRole: entry.actor.role,
    action: entry.action,
    targetType: entry.target.type,
    targetId: entry.target.id,
    before: entry.before ? (redact(entry.before) as Snapshot) : null,
    after: entry.after ? (redact(entry.after) as Snapshot) : null,
    requestId: entry.actor.requestId,
    via: entry.actor.via,
  });
  return id;
}
