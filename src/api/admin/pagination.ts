// Cursor pagination shared by every admin list: ids are ULID-ordered, the cursor is the last id returned, as
// base64url (opaque, and safe in a query string whatever the id holds: A9).
// C9: every list also takes order (asc|desc) and a from/to window on the creation time.
import { z } from '@hono/zod-openapi';
import { OPERATOR_DATE_HINT, parseOperatorDate, storableInstant } from '../../shared/operator-date.js';
import { parseTimeCursor } from '../../db/list-window.js';
import { ApiError } from '../errors.js';

const operatorDate = (description: string) =>
  z
    .string()
    .transform((text, ctx) => parseOperatorDate(text) ?? (ctx.addIssue({ code: 'custom', message: OPERATOR_DATE_HINT }), z.NEVER))
    .optional()
    .openapi({ description, example: '2026-12-01', type: 'string' });

export const paginationQuery = {
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: '1–100, default 20' }),
};

/** C9: the lists of deliveries, endpoints and reconciliations also take a direction and a creation-time window. */
export const windowQuery = {
  order: z.enum(['asc', 'desc']).default('asc').openapi({ description: 'asc (oldest first, the default) or desc (newest first)' }),
  from: operatorDate('created at or after (inclusive): a date 2026-12-01 or an ISO date-time'),
  to: operatorDate('created before (exclusive): a date 2026-12-01 or an ISO date-time'),
};

/** The window fields of a parsed list query, without the undefined ones (exactOptionalPropertyTypes). */
export function listWindow(q: { order: 'asc' | 'desc'; from?: Date | undefined; to?: Date | undefined }) {
  return { order: q.order, ...(q.from ? { from: q.from } : {}), ...(q.to ? { to: q.to } : {}) };
}

export const encodeCursor = (lastId: string) => Buffer.from(lastId, 'utf8').toString('base64url');

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  // Node decodes leniently (skips foreign characters): only a cursor that re-encodes to itself is one of ours.
  // Ids are printable ASCII; reconciliation ids carry a provider event id of up to 200 characters (A9).
  if (encodeCursor(id) !== cursor || !/^[\x21-\x7e]{1,400}$/.test(id)) throw new ApiError('validation_failed', 'cursor: not a cursor returned by this API');
  return id;
}

/** A list query's cursor as the id to continue after; nothing on the first page (exactOptionalPropertyTypes). */
export const afterIdOf = (cursor: string | undefined) => (cursor === undefined ? {} : { afterId: decodeCursor(cursor)! });

/** The same for a list ordered by creation time (reconciliations): its cursor carries (created_at, id), see timeCursor. */
export function afterTimeOf(cursor: string | undefined) {
  if (cursor === undefined) return {};
  const after = parseTimeCursor(decodeCursor(cursor)!);
  // R21: a made-up time past 9999 would reach PostgreSQL as a timestamptz it refuses (a 500): not a cursor of ours.
  if (!after || !storableInstant(after.at.getTime())) throw new ApiError('validation_failed', 'cursor: not a cursor returned by this API');
  return { after };
}

/** Rows are fetched with limit + 1 (in the list's order) to know whether another page exists. */
export function page<T>(rows: T[], limit: number, cursorOf: (row: T) => string) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, has_more: hasMore, next_cursor: hasMore ? encodeCursor(cursorOf(data[data.length - 1]!)) : null };
}

export const listEnvelope = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
