// M7: the resume cursor of `apipay listen`'s event stream, sent as each SSE event's id and read back from
// Last-Event-ID. Pure: parsing, encoding and the order of events within one snapshot; src/outbound/event-stream.ts
// runs the queries. A cursor says which of a merchant's events are already sent:
//   - every event whose writing transaction is visible in the snapshot `after` (it had committed when it was taken);
//   - with `within`: of the events visible in `within.snapshot` but not in `after`, those at or before
//     (within.xid, within.eventId) in stream order.
// The snapshots are PostgreSQL pg_snapshot texts ("xmin:xmax:xip,…"); a cursor grants nothing (the merchant
// account always comes from the credential), so a tampered one can only ask for the caller's own events again.

export interface StreamCursor {
  after: string;
  within?: { snapshot: string; xid: string; eventId: string };
}

export class CursorError extends Error {
  override name = 'CursorError';
}

const SEPARATOR = '~';
const MAX_CURSOR_LENGTH = 16_384;
const EVENT_ID = /^evt_[A-Za-z0-9_]{1,200}$/;
const XID = /^\d{1,20}$/;

/** A pg_snapshot text PostgreSQL accepts: xmin ≤ xmax, every in-progress xid in [xmin, xmax), ascending. */
export function isSnapshot(text: string): boolean {
  const match = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20})(?:,\d{1,20})*)?$/.exec(text);
  if (!match) return false;
  const xmin = BigInt(match[1]!);
  const xmax = BigInt(match[2]!);
  if (xmin < 1n || xmin > xmax) return false;
  let last = xmin;
  for (const part of match[3] ? match[3].split(',') : []) {
    const xid = BigInt(part);
    if (xid < last || xid >= xmax) return false;
    last = xid;
  }
  return true;
}

export function encodeCursor(cursor: StreamCursor): string {
  const w = cursor.within;
  return w ? [cursor.after, w.snapshot, w.xid, w.eventId].join(SEPARATOR) : cursor.after;
}

/** Throws CursorError (message names no part of the input) when the text is not a cursor this server wrote. */
export function decodeCursor(text: string): StreamCursor {
  if (text.length > MAX_CURSOR_LENGTH) throw new CursorError('is too long');
  const parts = text.trim().split(SEPARATOR);
  const [after, snapshot, xid, eventId] = parts;
  if (!after || !isSnapshot(after)) throw new CursorError('is not a stream cursor');
  if (parts.length === 1) return { after };
  if (parts.length !== 4 || !isSnapshot(snapshot!) || !XID.test(xid!) || !EVENT_ID.test(eventId!)) {
    throw new CursorError('is not a stream cursor');
  }
  return { after, within: { snapshot: snapshot!, xid: xid!, eventId: eventId! } };
}

/** `type` matches one of the globs: `*` stands for any run of characters (dots too), `payment.*`, `*.failed`, `*`. */
export function typeMatcher(globs: string[]): (type: string) => boolean {
  if (globs.length === 0 || globs.includes('*')) return () => true;
  const patterns = globs.map((g) => new RegExp(`^${g.split('*').map(escapeRegExp).join('.*')}$`));
  return (type) => patterns.some((p) => p.test(type));
}
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** What a glob may contain: the characters of event types and `*`. */
export const TYPE_GLOB = /^[a-z0-9_.*]{1,200}$/;
