// M7: the source of `apipay listen`'s stream: one merchant account's events, in the order their transactions
// became visible, from a cursor (src/outbound/stream-cursor.ts). A short poll on the events table: each poll takes
// a snapshot S and reads the events invisible in the previous snapshot and visible in S (pg_visible_in_snapshot on
// events.stream_xid, the writing transaction). Nothing is skipped when transactions commit out of order, and a
// long-running transaction elsewhere delays nothing. Only the merchant account, type, livemode, created time and
// the exact body (O4) leave here: never endpoints, secrets or deliveries.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { encodeCursor, type StreamCursor } from './stream-cursor.js';

export interface StreamFilter {
  merchantAccount: string;
  livemode: boolean;
  matches: (type: string) => boolean;
}

export interface StreamedEvent {
  /** The cursor just after this event: its SSE id. */
  cursor: string;
  id: string;
  type: string;
  livemode: boolean;
  created: number;
  /** The exact body every delivery POSTs (UTF-8 JSON, validated by the dispatcher). */
  body: string;
}

export interface EventStreamSource {
  /** A cursor after everything committed now: a new stream starts here. */
  now(): Promise<StreamCursor>;
  /** The next events after `cursor` (at most one batch) and the cursor after them, filtered events included. */
  next(filter: StreamFilter, cursor: StreamCursor): Promise<{ events: StreamedEvent[]; cursor: StreamCursor; more: boolean }>;
}

interface Row extends Record<string, unknown> {
  id: string;
  type: string;
  livemode: boolean;
  created_unix: string | number;
  body: Buffer;
  xid: string;
}

export function createEventStreamSource(deps: { db: Db; batchSize?: number }): EventStreamSource {
  const { db } = deps;
  const limit = deps.batchSize ?? 100;
  const snapshotNow = async () => {
    const [row] = await db.execute<{ snap: string }>(sql`select pg_current_snapshot()::text as snap`);
    return row!.snap;
  };
  return {
    async now() {
      return { after: await snapshotNow() };
    },
    async next(filter, cursor) {
      // Drain the snapshot of a batch that hit the limit before taking a new one.
      const snapshot = cursor.within?.snapshot ?? (await snapshotNow());
      const position = cursor.within
        ? sql`and (e.stream_xid, e.event_public_id) > (${cursor.within.xid}::xid8, ${cursor.within.eventId})`
        : sql``;
      const rows = await db.execute<Row>(sql`
        select e.event_public_id as id, e.type, e.livemode, e.created_unix, e.body, e.stream_xid::text as xid
        from events e
        where e.merchant_account = ${filter.merchantAccount}
          and e.livemode = ${filter.livemode}
          and e.stream_xid >= pg_snapshot_xmin(${cursor.after}::pg_snapshot)
          and e.stream_xid < pg_snapshot_xmax(${snapshot}::pg_snapshot)
          and not pg_visible_in_snapshot(e.stream_xid, ${cursor.after}::pg_snapshot)
          and pg_visible_in_snapshot(e.stream_xid, ${snapshot}::pg_snapshot)
          and e.body is not null -- O19: an expunged event has nothing to forward
          ${position}
        order by e.stream_xid, e.event_public_id
        limit ${limit}`);
      const more = rows.length === limit;
      const at = (row: Row): StreamCursor => ({ after: cursor.after, within: { snapshot, xid: row.xid, eventId: row.id } });
      const events = rows
        .filter((row) => filter.matches(row.type))
        .map((row) => ({
          cursor: encodeCursor(at(row)),
          id: row.id,
          type: row.type,
          livemode: row.livemode,
          created: Number(row.created_unix),
          body: Buffer.from(row.body).toString('utf8'),
        }));
      const last = rows[rows.length - 1];
      return { events, cursor: more && last ? at(last) : { after: snapshot }, more };
    },
  };
}
