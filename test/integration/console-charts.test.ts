// C12, C13 on the real PostgreSQL: the chart queries. An attempt gets its endpoint from its delivery (migration
// 0028's trigger); attempts are counted per bucket by outcome with p50/p99; sparklines, failure groups and waiting
// deliveries stay inside the endpoints or the merchant they were asked for; the backlog sampler writes one row a
// minute and prunes after 8 days; the ack → ledger lag and postings by kind and currency read the window only.
// The staff-wide queries are checked on windows in 2001–2008, which no other test writes to.
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import {
  backlogSamples,
  deliveries,
  deliveryAttempts,
  ledgerEntries,
  ledgerTransactions,
  reconciliations,
} from '../../src/db/schema/index.js';
import { createChartServices } from '../../src/api/console/charts/services.js';
import { backlogHistory, sampleBacklog, startBacklogSampler } from '../../src/inbound/backlog-history.js';
import { ackToLedgerLag } from '../../src/inbound/charts.js';
import { postingsByKind } from '../../src/ledger/charts.js';
import { attemptSeries, failureGroups, successSparklines, waitingDeliveries } from '../../src/outbound/charts.js';
import { chartWindow } from '../../src/shared/chart-window.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, uniqueMerchant, waitFor } from '../helpers/outbound.js';

let database: Database;
beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
});
afterAll(async () => database?.close());

const minutesAgo = (now: Date, m: number, s = 0) => new Date(now.getTime() - m * 60_000 - s * 1000);

async function attempt(
  deliveryId: string,
  n: number,
  at: Date,
  a: { status?: number | null; ok?: boolean; kind?: string | null; latency?: number },
) {
  await database.db.insert(deliveryAttempts).values({
    deliveryId,
    attemptNumber: n,
    startedAt: at,
    responseStatus: a.status ?? null,
    latencyMs: a.latency ?? 10,
    succeeded: a.ok ?? false,
    errorKind: a.kind ?? null,
  });
}

describe('C12 endpoint charts', () => {
  it('C12 attempts carry their endpoint and are counted per bucket by outcome, with p50 and p99', async () => {
    const now = new Date();
    const merchant = uniqueMerchant('charts');
    const endpoint = await insertEndpoint(database.db, { merchantAccount: merchant, url: 'http://127.0.0.1:4999/a' });
    const other = await insertEndpoint(database.db, {
      merchantAccount: uniqueMerchant('charts-b'),
      url: 'http://127.0.0.1:4999/b',
    });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: merchant });
    const { deliveryId: theirs } = await insertDelivery(database.db, { endpointId: other.id, merchantAccount: 'x' });
    const at = minutesAgo(now, 2);
    await attempt(deliveryId, 1, at, { status: 200, ok: true, latency: 10 });
    await attempt(deliveryId, 2, at, { status: 200, ok: true, latency: 20 });
    await attempt(deliveryId, 3, at, { status: 503, kind: 'server_error', latency: 30 });
    await attempt(deliveryId, 4, at, { status: 503, kind: 'server_error', latency: 1000 });
    await attempt(deliveryId, 5, at, { kind: 'timeout', latency: 10_000 });
    await attempt(deliveryId, 6, at, { status: 404, kind: 'client_error' });
    await attempt(deliveryId, 7, at, { kind: 'connection' });
    await attempt(deliveryId, 8, minutesAgo(now, 90), { status: 500, kind: 'server_error' }); // outside the hour
    await attempt(theirs, 1, at, { status: 500, kind: 'server_error' });
    await attempt(deliveryId, 9, at, { kind: 'in_flight' }); // O7's reservation: no outcome yet, not counted

    const [row] = await database.db
      .select({ e: deliveryAttempts.endpointId })
      .from(deliveryAttempts)
      .where(eq(deliveryAttempts.deliveryId, deliveryId))
      .limit(1);
    expect(row!.e).toBe(endpoint.id);

    const w = chartWindow('1h', now);
    const buckets = await attemptSeries(database.db, endpoint.id, w);
    expect(buckets).toHaveLength(60);
    const i = w.buckets.findIndex((b) => b.getTime() <= at.getTime() && at.getTime() < b.getTime() + 60_000);
    expect(buckets[i]).toMatchObject({ ok: 2, serverError: 2, timeout: 1, clientError: 1, other: 1 });
    expect(buckets[i]!.p50Ms).toBe(20);
    expect(buckets[i]!.p99Ms).toBeGreaterThan(9000);
    expect(buckets.reduce((a, b) => a + b.ok + b.serverError + b.clientError + b.timeout + b.other, 0)).toBe(7);
    const day = await attemptSeries(database.db, endpoint.id, chartWindow('24h', now));
    expect(day.reduce((a, b) => a + b.serverError, 0)).toBe(3);

    const spark = await successSparklines(database.db, [endpoint.id], chartWindow('24h', now));
    expect([...spark.keys()]).toEqual([endpoint.id]);
    expect(spark.get(endpoint.id)!.filter((v) => v !== null)).toEqual(expect.arrayContaining([0]));
    const groups = await failureGroups(database.db, [endpoint.id], new Date(now.getTime() - 86_400_000));
    expect(groups.every((g) => g.endpointId === endpoint.id)).toBe(true);
    expect(groups[0]).toMatchObject({ status: 503, count: 2 });
    expect(groups.find((g) => g.kind === 'timeout')).toMatchObject({ status: null, count: 1 });
    expect(await failureGroups(database.db, [], now)).toEqual([]);
  });

  it('C13 the waiting deliveries are the merchant’s own, the soonest first', async () => {
    const merchant = uniqueMerchant('waiting');
    const endpoint = await insertEndpoint(database.db, { merchantAccount: merchant, url: 'http://127.0.0.1:4999/w' });
    const later = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: merchant });
    const sooner = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: merchant });
    const done = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: merchant });
    const soon = new Date(Date.now() + 60_000);
    await database.db
      .update(deliveries)
      .set({ status: 'RETRYING', nextAttemptAt: new Date(soon.getTime() + 600_000), attemptCount: 2 })
      .where(eq(deliveries.id, later.deliveryId));
    await database.db
      .update(deliveries)
      .set({ status: 'RETRYING', nextAttemptAt: soon, attemptCount: 1 })
      .where(eq(deliveries.id, sooner.deliveryId));
    await database.db.update(deliveries).set({ status: 'DELIVERED' }).where(eq(deliveries.id, done.deliveryId));
    const waiting = await waitingDeliveries(database.db, merchant);
    expect(waiting.count).toBe(2);
    expect(waiting.rows.map((r) => r.id)).toEqual([sooner.deliveryId, later.deliveryId]);
    expect(waiting.rows[0]).toMatchObject({ status: 'RETRYING', attemptCount: 1, endpointId: endpoint.id });
    expect((await waitingDeliveries(database.db, uniqueMerchant('nobody'))).count).toBe(0);
  });
});

describe('C12 backlog history', () => {
  const base = new Date('2001-03-01T10:00:00Z');
  it('C12 the history draws the samples of the window, the largest per bucket', async () => {
    const row = (minute: Date, retrying: number) => ({
      minute,
      outboundPending: 1,
      outboundPendingOldestS: 5,
      outboundRetrying: retrying,
      outboundRetryingOldestS: retrying * 60,
      manualReview: 2,
      manualReviewOldestS: 30,
      inboundUnstarted: 0,
      inboundUnstartedOldestS: 0,
    });
    await database.db.delete(backlogSamples).where(sql`minute < '2002-01-01'`);
    await database.db.insert(backlogSamples).values([row(base, 9), row(minutesAgo(base, -1), 4), row(minutesAgo(base, -2), 0)]);
    const w = chartWindow('1h', minutesAgo(base, -2, -10));
    const history = await backlogHistory(database.db, w);
    const drawn = history.filter((s) => s !== null).map((s) => s!.outboundRetrying);
    expect(drawn).toEqual([9, 4, 0]); // the retries draining
    expect(history.filter((s) => s === null)).toHaveLength(57);
    const day = await backlogHistory(database.db, chartWindow('24h', minutesAgo(base, -2)));
    expect(day.filter((s) => s !== null).map((s) => s!.outboundRetrying)).toEqual([9]);
  });

  it('C12 the sampler writes one row a minute, whichever call is first, and prunes samples older than 8 days', async () => {
    const now = new Date();
    await database.db.delete(backlogSamples).where(sql`minute >= ${minutesAgo(now, 5).toISOString()}::timestamptz`);
    expect(await sampleBacklog(database.db, now)).toBe(true);
    expect(await sampleBacklog(database.db, new Date(now.getTime() + 1))).toBe(
      now.getSeconds() === 59 && now.getMilliseconds() === 999,
    );
    const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
    const [sample] = await database.db.select().from(backlogSamples).where(eq(backlogSamples.minute, minute));
    expect(sample!.outboundRetrying).toBeGreaterThanOrEqual(0);
    const old = await database.db
      .select()
      .from(backlogSamples)
      .where(sql`minute < now() - interval '8 days'`);
    expect(old).toEqual([]);
  });

  it('C12 the API process’s sampler loop writes this minute’s sample and stops when told', async () => {
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    await database.db.delete(backlogSamples).where(sql`minute >= ${minute.toISOString()}::timestamptz`);
    const errors: unknown[] = [];
    const stop = startBacklogSampler(database.db, (e) => errors.push(e), 50);
    try {
      await waitFor(
        async () =>
          (
            await database.db
              .select()
              .from(backlogSamples)
              .where(sql`minute >= ${minute.toISOString()}::timestamptz`)
          ).length > 0,
        10_000,
        'a sample',
      );
    } finally {
      stop();
    }
    expect(errors).toEqual([]);
  });
});

describe('C12 inbound and ledger charts', () => {
  // A random day of 2001–2008 (the ledger is append-only: an earlier run's rows stay, on another day).
  const base = new Date(
    Date.UTC(2001 + Math.floor(Math.random() * 8), Math.floor(Math.random() * 12), 1 + Math.floor(Math.random() * 27), 12),
  );
  it('C12 ack → ledger lag and postings by kind and currency read the window', async () => {
    const provider = `charts-${randomUUID().slice(0, 8)}`;
    const post = async (kind: string, currency: string, postedAt: Date) => {
      const id = `ltx_${randomUUID().replaceAll('-', '')}`;
      await database.db.transaction(async (tx) => {
        await tx.insert(ledgerTransactions).values({
          id,
          idempotencyKey: id,
          contentHash: 'x',
          kind,
          paymentReference: `pi_${id}`,
          effectiveAt: postedAt,
          postedAt,
        });
        await tx.insert(ledgerEntries).values([
          { transactionId: id, account: 'a', amountMinor: 100n, currency },
          { transactionId: id, account: 'b', amountMinor: -100n, currency },
        ]);
      });
      return id;
    };
    const reconcile = async (acknowledgedAt: Date, ledgerTransactionId: string | null) =>
      database.db.insert(reconciliations).values({
        id: `reconcile:${provider}:${randomUUID()}`,
        provider,
        providerEventId: randomUUID(),
        eventType: 'payment.succeeded',
        paymentReference: 'pi_x',
        amountMinor: 100n,
        currency: 'EUR',
        effectiveAt: acknowledgedAt,
        state: ledgerTransactionId ? 'applied' : 'manual_review',
        acknowledgedAt,
        ledgerTransactionId,
      });
    const ack = minutesAgo(base, 30);
    await reconcile(ack, await post('payment', 'EUR', new Date(ack.getTime() + 2_000)));
    await reconcile(ack, await post('payment', 'EUR', new Date(ack.getTime() + 4_000)));
    await reconcile(ack, await post('refund', 'USD', new Date(ack.getTime() + 60_000)));
    await reconcile(ack, null);
    const w = chartWindow('24h', base);
    const lag = (await ackToLedgerLag(database.db, w)).filter((b) => b.posted + b.unposted > 0);
    expect(lag).toHaveLength(1);
    expect(lag[0]).toMatchObject({ posted: 3, unposted: 1, p50Seconds: 4 });
    expect(lag[0]!.p99Seconds).toBeGreaterThan(55);
    const postings = await postingsByKind(database.db, chartWindow('7d', base));
    expect([...postings.keys()]).toEqual(['payment EUR', 'refund USD']);
    expect(postings.get('payment EUR')!.reduce((a, b) => a + b, 0)).toBe(2);
    expect(postings.get('refund USD')!.reduce((a, b) => a + b, 0)).toBe(1);
    // The page's path: closed days read once and kept, the open day read again; the same figures either way.
    let clock = base.getTime() + 86_400_000;
    const charts = createChartServices(database.db, () => new Date(clock));
    const direct = await postingsByKind(database.db, chartWindow('30d', new Date(clock)));
    expect((await charts.postings('30d')).series).toEqual(direct);
    clock += 60_000;
    expect((await charts.postings('30d')).series.get('payment EUR')!.reduce((a, b) => a + b, 0)).toBe(2);
  });
});
