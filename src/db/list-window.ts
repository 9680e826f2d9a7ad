// The time window and direction every admin list shares (C4, C9): `from` (inclusive) and `to` (exclusive) on a
// creation time, ascending or descending, keyset-paginated after the last row of the previous page.
import { and, asc, desc, gt, gte, lt, or, eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';

export type ListOrder = 'asc' | 'desc';

export interface ListWindow {
  order?: ListOrder;
  from?: Date;
  to?: Date;
}

/** Where and orderBy for a table whose id sorts in creation order (ULIDs): the cursor is the last id. */
export function idWindow(
  id: AnyColumn,
  createdAt: AnyColumn,
  w: ListWindow & { afterId?: string },
): { where: SQL[]; orderBy: SQL[] } {
  const where = timeBounds(createdAt, w);
  const descending = w.order === 'desc';
  if (w.afterId !== undefined) where.push(descending ? lt(id, w.afterId) : gt(id, w.afterId));
  return { where, orderBy: [descending ? desc(id) : asc(id)] };
}

/**
 * For a table whose id does not sort in time (reconciliation ids name the provider's event): ordered by
 * (created_at, id); the cursor carries both, see timeCursor.
 */
export function timeWindow(
  id: AnyColumn,
  createdAt: AnyColumn,
  w: ListWindow & { after?: { at: Date; id: string } },
): { where: SQL[]; orderBy: SQL[] } {
  const where = timeBounds(createdAt, w);
  const descending = w.order === 'desc';
  // PostgreSQL keeps microseconds, a Date milliseconds: order and compare at the cursor's precision.
  const at = sql`date_trunc('milliseconds', ${createdAt})`;
  if (w.after) {
    const beyond = descending ? lt : gt;
    const after = sql`${w.after.at.toISOString()}::timestamptz`;
    where.push(or(beyond(at, after), and(eq(at, after), beyond(id, w.after.id)))!);
  }
  const dir = descending ? desc : asc;
  return { where, orderBy: [dir(at), dir(id)] };
}

/** `<epoch ms>:<id>`: the row timeWindow pages after. */
export const timeCursor = (at: Date, id: string) => `${at.getTime()}:${id}`;

export function parseTimeCursor(text: string): { at: Date; id: string } | undefined {
  const match = /^(\d{1,15}):(.+)$/.exec(text);
  return match ? { at: new Date(Number(match[1])), id: match[2]! } : undefined;
}

function timeBounds(createdAt: AnyColumn, w: ListWindow): SQL[] {
  const where: SQL[] = [];
  if (w.from) where.push(gte(createdAt, w.from));
  if (w.to) where.push(lt(createdAt, w.to));
  return where;
}
