// M7 the stream's source on the real PostgreSQL: the snapshot cursor loses no event when transactions commit out of
// order (an older transaction committing after newer ones), drains a snapshot across batches, resumes exactly from
// any event's cursor, and never returns another account's events or the other livemode.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { createEventStreamSource, type StreamedEvent, type StreamFilter } from '../../src/outbound/event-stream.js';
import { decodeCursor, typeMatcher, type StreamCursor } from '../../src/outbound/stream-cursor.js';
import { uniqueEventId, uniqueMerchant } from '../helpers/outbound.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
const world = useWorld({ label: 'event-stream-source' });
beforeAll(() => {
  database = world.database;
});

const row = (merchantAccount: string, type = 'payment.succeeded', livemode = false) => {
  const id = uniqueEventId();
  return {
    eventPublicId: id,
    merchantAccount,
    type,
    livemode,
    createdUnix: 1_780_000_000,
    body: Buffer.from(JSON.stringify({ id, marker: randomUUID() })),
  };
};
const insert = async (...rows: ReturnType<typeof row>[]) => {
  for (const r of rows) await database.db.insert(events).values(r); // one transaction each
  return rows.map((r) => r.eventPublicId);
};

/** Every event after `cursor` until a poll of a fresh snapshot finds nothing, and the cursor after them. */
async function drain(source: ReturnType<typeof createEventStreamSource>, filter: StreamFilter, from: StreamCursor) {
  const got: StreamedEvent[] = [];
  let cursor = from;
  for (let i = 0; i < 50; i++) {
    const fresh = cursor.within === undefined;
    const batch = await source.next(filter, cursor);
    got.push(...batch.events);
    cursor = batch.cursor;
    if (fresh && batch.events.length === 0 && !batch.more) break;
  }
  return { got, cursor };
}

describe('M7 event stream source (snapshot cursor)', () => {
  it('M7 an older transaction that commits late is streamed after the newer ones; batches drain a snapshot; nothing twice', async () => {
    const account = uniqueMerchant('stream-src');
    const filter = { merchantAccount: account, livemode: false, matches: typeMatcher([]) };
    const source = createEventStreamSource({ db: database.db, batchSize: 2 });
    const start = await source.now();

    const late = row(account);
    const open = await database.sql.reserve();
    try {
      await open`begin`;
      await open`insert into events (event_public_id, merchant_account, type, livemode, created_unix, body) values (${late.eventPublicId}, ${account}, ${late.type}, false, ${late.createdUnix}, ${late.body})`;
      const committed = await insert(
        row(account),
        row(account),
        row(account),
        row(uniqueMerchant('stream-other')),
        row(account, 'payment.succeeded', true),
      );

      const first = await drain(source, filter, start);
      expect(first.got.map((e) => e.id)).toEqual(committed.slice(0, 3)); // commit order; not the open one, not the others
      expect(first.got.every((e) => JSON.parse(e.body).id === e.id)).toBe(true);

      await open`commit`;
      const second = await drain(source, filter, first.cursor);
      expect(second.got.map((e) => e.id)).toEqual([late.eventPublicId]);
      expect((await drain(source, filter, second.cursor)).got).toEqual([]);

      // Resuming from any event's cursor yields exactly what came after it.
      const all = [...first.got, ...second.got];
      for (const [i, e] of all.entries()) {
        const rest = await drain(source, filter, decodeCursor(e.cursor));
        expect(
          rest.got.map((r) => r.id),
          `after event ${i}`,
        ).toEqual(all.slice(i + 1).map((r) => r.id));
      }
    } finally {
      await open`rollback`.catch(() => undefined);
      open.release();
    }
  });

  it('M7 the type filter skips events but the cursor moves past them; livemode selects live events only', async () => {
    const account = uniqueMerchant('stream-filter');
    const source = createEventStreamSource({ db: database.db, batchSize: 2 });
    const start = await source.now();
    const [refund, payment, live] = await insert(
      row(account, 'refund.succeeded'),
      row(account, 'payment.failed'),
      row(account, 'payment.succeeded', true),
    );
    const test = await drain(source, { merchantAccount: account, livemode: false, matches: typeMatcher(['payment.*']) }, start);
    expect(test.got.map((e) => e.id)).toEqual([payment]);
    expect(
      (await drain(source, { merchantAccount: account, livemode: false, matches: typeMatcher(['*']) }, test.cursor)).got,
    ).toEqual([]);
    const liveOnly = await drain(source, { merchantAccount: account, livemode: true, matches: typeMatcher([]) }, start);
    expect(liveOnly.got.map((e) => e.id)).toEqual([live]);
    expect(refund).toBeDefined();
  });
});
