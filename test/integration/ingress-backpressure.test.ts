// R5 back-pressure on the real PostgreSQL: past the receipt writer's bound, past its commit deadline, or when
// statement_timeout ends a commit, the ingress answers 503 + Retry-After in the one error shape and stores nothing
// it did not acknowledge as stored; every accepted receipt is stored once; a failed batch's per-receipt fallback
// stays inside the in-flight bound. PostgreSQL is slowed by a registry row lock a test transaction holds.
import { Client, Connection } from '@temporalio/client';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database, type Db } from '../../src/db/client.js';
import { createGroupCommitWriter, type ReceiptToWrite } from '../../src/inbound/receipt-writer.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { inboundTestProfile, storedFor, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';

let database: Database;
// Never contacted: every test here leaves workflow starts to the sweep (starter: null).
const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
const taskQueues = uniqueTaskQueues('backpressure');

beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
});
afterAll(() => database.close());

/** Holds the registry row of (provider, id) in an open transaction: a commit of that event waits until release(). */
async function holdRegistryRow(provider: string, providerEventId: string) {
  const conn = await database.sql.reserve();
  await conn`begin`;
  await conn`insert into provider_event_registry (provider, provider_event_id) values (${provider}, ${providerEventId})`;
  return {
    async release() {
      await conn`rollback`;
      conn.release();
    },
  };
}

/** Resolves once some statement of this database waits on a lock (the writer's commit is stuck behind ours). */
async function untilLockWait(): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
      return row!.n > 0;
    },
    5_000,
    'a statement waiting on the held lock',
    25,
  );
}

const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string; message: string } }).error;

describe('R5 bounded receipt queue', () => {
  it('R5 past a bound of N receipts the ingress answers 503 + Retry-After at once; the N accepted are all stored', async () => {
    const N = 5;
    const { profile, stripe } = inboundTestProfile('bp', { inbound: { overload_retry_after: '3s' } });
    const writer = createGroupCommitWriter({ db: database.db, maxPending: N, maxInFlight: 1 });
    const app = testApp({ db: database.db, temporal, taskQueues, profile, ingress: { writer, starter: null } });
    const events = Array.from({ length: N + 3 }, () => stripeEvent());
    const lock = await holdRegistryRow(stripe, events[0]!.id);
    try {
      const first = app.request(`/webhooks/${stripe}`, stripeRequest(events[0]!.body));
      await untilLockWait();
      const accepted = [first, ...events.slice(1, N).map((e) => app.request(`/webhooks/${stripe}`, stripeRequest(e.body)))];
      await new Promise((r) => setImmediate(r));
      expect(writer.held.receipts).toBe(N);
      const refused = await Promise.all(events.slice(N).map((e) => app.request(`/webhooks/${stripe}`, stripeRequest(e.body))));
      for (const response of refused) {
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('3');
        expect(await errorOf(response)).toMatchObject({ code: 'unavailable' });
      }
      await lock.release();
      const answers = await Promise.all(accepted);
      expect(answers.map((r) => r.status)).toEqual(Array(N).fill(200));
    } finally {
      await lock.release().catch(() => {});
    }
    for (const e of events.slice(0, N)) expect(await storedFor(database.db, stripe, e.id)).toMatchObject({ registry: 1, receipts: 1 });
    for (const e of events.slice(N)) expect(await storedFor(database.db, stripe, e.id)).toMatchObject({ registry: 0, receipts: 0 });
    // The provider's retry after Retry-After is accepted once there is room.
    for (const e of events.slice(N)) expect((await app.request(`/webhooks/${stripe}`, stripeRequest(e.body))).status).toBe(200);
    expect(writer.held).toEqual({ receipts: 0, bytes: 0 });
  });

  it('R5 a commit slower than inbound.receipt_commit_deadline answers 503 + Retry-After; the late commit is kept and a retry is a duplicate', async () => {
    const { profile, stripe } = inboundTestProfile('bp', { inbound: { receipt_commit_deadline: '300ms', overload_retry_after: '2s' } });
    const app = testApp({ db: database.db, temporal, taskQueues, profile, ingress: { starter: null } });
    const slow = stripeEvent();
    const lock = await holdRegistryRow(stripe, slow.id);
    let response: Response;
    try {
      const startedAt = Date.now();
      response = await app.request(`/webhooks/${stripe}`, stripeRequest(slow.body));
      expect(Date.now() - startedAt).toBeLessThan(5_000);
    } finally {
      await lock.release();
    }
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(await errorOf(response)).toMatchObject({ code: 'unavailable' });
    // Once the lock is gone the statement still in flight commits; the provider's retry then finds it.
    await waitFor(async () => (await storedFor(database.db, stripe, slow.id)).receipts > 0, 10_000, 'the in-flight receipt committed', 50);
    const retry = await app.request(`/webhooks/${stripe}`, stripeRequest(slow.body));
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ received: true, duplicate: true });
    expect(await storedFor(database.db, stripe, slow.id)).toMatchObject({ registry: 1, receipts: 1 });
  });

  it('R5 statement_timeout is set on every connection and ends a stuck commit: 503, nothing stored, the retry stores it', async () => {
    const quick = createDatabase(TEST_DATABASE_URL, { max: 2, statementTimeoutMs: 250, idleInTransactionTimeoutMs: 5_000 });
    try {
      const [settings] = await quick.sql<{ st: string; it: string }[]>`select current_setting('statement_timeout') as st, current_setting('idle_in_transaction_session_timeout') as it`;
      expect(settings).toEqual({ st: '250ms', it: '5s' });
      const [defaults] = await database.sql<{ st: string; it: string }[]>`select current_setting('statement_timeout') as st, current_setting('idle_in_transaction_session_timeout') as it`;
      expect(defaults).toEqual({ st: '30s', it: '1min' });

      const { profile, stripe } = inboundTestProfile('bp', { inbound: { receipt_commit_deadline: '30s' } });
      const app = testApp({ db: quick.db, temporal, taskQueues, profile, ingress: { starter: null } });
      const stuck = stripeEvent();
      const lock = await holdRegistryRow(stripe, stuck.id);
      let response: Response;
      try {
        response = await app.request(`/webhooks/${stripe}`, stripeRequest(stuck.body));
      } finally {
        await lock.release();
      }
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await storedFor(database.db, stripe, stuck.id)).toMatchObject({ registry: 0, receipts: 0 });
      expect((await app.request(`/webhooks/${stripe}`, stripeRequest(stuck.body))).status).toBe(200);
      expect(await storedFor(database.db, stripe, stuck.id)).toMatchObject({ registry: 1, receipts: 1 });
    } finally {
      await quick.close();
    }
  });
});

describe('R5 per-receipt fallback', () => {
  it('R5 a batch failing on one bad receipt is retried one by one, never more statements in flight than maxInFlight', async () => {
    const real = (database.db as unknown as { $client: Sql }).$client;
    let active = 0;
    let peak = 0;
    // The real pool behind a counter of statements in flight (commitBatch issues one tagged statement per batch).
    const counting = (strings: TemplateStringsArray, ...values: unknown[]) => {
      active += 1;
      peak = Math.max(peak, active);
      return (real(strings, ...(values as never[])) as unknown as Promise<unknown>).finally(() => {
        active -= 1;
      });
    };
    const db = { $client: counting } as unknown as Db;
    const writer = createGroupCommitWriter({ db, maxInFlight: 2 });
    const { stripe } = inboundTestProfile('bp');
    const receipt = (id: string): ReceiptToWrite => ({ provider: stripe, providerEventId: id, rawBody: Buffer.from('{}'), headers: {}, receivedAt: new Date() });
    const good = Array.from({ length: 40 }, (_, i) => receipt(`evt_good_${i}_${Date.now()}`));
    // A NUL byte PostgreSQL refuses in text: its batch fails on data, so every receipt of it is retried alone.
    const bad = receipt(`evt_bad\u0000${Date.now()}`);
    const results = await Promise.allSettled([...good.slice(0, 20), bad, ...good.slice(20)].map((r) => writer.write(r)));
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[20]!.status).toBe('rejected');
    expect(peak).toBeLessThanOrEqual(2);
    expect(writer.stats.transactions).toBe(40); // the split really happened: each good receipt alone
    for (const r of good) expect((await storedFor(database.db, stripe, r.providerEventId)).receipts).toBe(1);
    expect(writer.held).toEqual({ receipts: 0, bytes: 0 });
  });
});
