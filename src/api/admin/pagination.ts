// Cursor pagination shared by every admin list: ids are ULID-ordered, the cursor is the last id returned, as
// base64url (opaque, and safe in a query string whatever the id holds: A9).
import { z } from '@hono/zod-openapi';
import { ApiError } from '../errors.js';

export const paginationQuery = {
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: '1–100, default 20' }),
};

export const encodeCursor = (lastId: string) => Buffer.from(lastId, 'utf8').toString('base64url');

export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  // Node decodes leniently (skips foreign characters): only a cursor that re-encodes to itself is one of ours.
  // Ids are printable ASCII; reconciliation ids carry a provider event id of up to 200 characters (A9).
  if (encodeCursor(id) !== cursor || !/^[\x21-\x7e]{1,400}$/.test(id)) throw new ApiError('validation_failed', 'cursor: not a cursor returned by this API');
  return id;
}

/** Rows are fetched with limit + 1 (ordered by id) to know whether another page exists. */
export function page<T>(rows: T[], limit: number, idOf: (row: T) => string) {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, has_more: hasMore, next_cursor: hasMore ? encodeCursor(idOf(data[data.length - 1]!)) : null };
}

export const listEnvelope = <T extends z.ZodTypeAny>(item: T) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
