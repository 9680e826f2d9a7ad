// Reading the audit log (A3): filtered by actor (key id or name), action, target and time, in id order (ULIDs, so
// creation order) either way, keyset-paginated like every admin list.
import { and, eq, or, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { idWindow, type ListWindow } from '../db/list-window.js';
import { auditEvents } from '../db/schema/index.js';

export type AuditEventRow = typeof auditEvents.$inferSelect;

export interface AuditFilter extends ListWindow {
  /** An apk_… key id (or bootstrap), or a key's name. */
  actor?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  afterId?: string;
  /** Rows to return; one more is fetched to tell whether another page exists. Omit for every row (the CSV). */
  limit?: number;
}

export async function listAuditEvents(db: Db, filter: AuditFilter): Promise<AuditEventRow[]> {
  const window = idWindow(auditEvents.id, auditEvents.at, filter);
  const where: SQL[] = window.where;
  if (filter.actor !== undefined)
    where.push(
      or(
        eq(auditEvents.actorKeyId, filter.actor),
        eq(auditEvents.actorName, filter.actor),
        eq(auditEvents.actorPerson, filter.actor),
        eq(auditEvents.actorPrincipalId, filter.actor),
      )!,
    );
  if (filter.action !== undefined) where.push(eq(auditEvents.action, filter.action));
  if (filter.targetType !== undefined) where.push(eq(auditEvents.targetType, filter.targetType));
  if (filter.targetId !== undefined) where.push(eq(auditEvents.targetId, filter.targetId));
  const query = db
    .select()
    .from(auditEvents)
    .where(and(...where))
    .orderBy(...window.orderBy);
  return filter.limit === undefined ? query : query.limit(filter.limit + 1);
}
