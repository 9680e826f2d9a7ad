// The attempt activity against the real PostgreSQL and real local HTTP peers: outcomes and kinds (O7), signature
// over the stored bytes (O8), attempt-once (O7), disabled endpoints (O13), URL safety at send time (O15).
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities } from '../../src/activities/delivery.js';
import { createPinnedAgents } from '../../src/outbound/pinned-agents.js';
import type { LookupAll } from '../../src/outbound/url-safety.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, webhookEndpoints } from '../../src/db/schema/index.js';
import { verify } from '../../src/signing/index.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { testLogger } from '../helpers/temporal.js';
import { freePort } from '../helpers/capture.js';

let database: Database;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const profile = testProfile({ outbound: { request_timeout: '400ms', response_excerpt_bytes: 16, in_flight_lease: '2s' } });

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  receiver = await startReceiver((request) => {
    const path = request.path;
    if (path.startsWith('/ok')) return { status: 204 };
    if (path.startsWith('/redirect')) return { status: 302, headers: { location: `/ok` } };
    if (path.startsWith('/client')) return { status: 404, body: 'no such webhook route here, sorry about that' };
    if (path.startsWith('/server')) return { status: 503, body: 'x'.repeat(5000) };
    if (path.startsWith('/slow')) return { status: 200, delayMs: 1500 };
    if (path.startsWith('/late-ok')) return { status: 200, delayMs: 250 };
    if (path.startsWith('/busy')) return { status: 429 };
    return { status: 500 };
  });
});
afterAll(async () => {
  await receiver.close();
  await database.close();
});

const activities = () => createDeliveryActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });

async function attemptRows(deliveryId: string) {
  return database.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId)).orderBy(deliveryAttempts.attemptNumber);
}

describe('delivery attempt activity', () => {
  it('O7 records timeout, connection refused, 3xx, 4xx and 5xx as failures with their kind and latency; 2xx as success', async () => {
    const port = await freePort();
    const cases = [
      { url: `${receiver.url}/ok`, succeeded: true, kind: null, status: 204 },
      { url: `${receiver.url}/redirect`, succeeded: false, kind: 'redirect', status: 302 },
      { url: `${receiver.url}/client`, succeeded: false, kind: 'client_error', status: 404 },
      { url: `${receiver.url}/server`, succeeded: false, kind: 'server_error', status: 503 },
      { url: `${receiver.url}/slow`, succeeded: false, kind: 'timeout', status: null },
      { url: `http://127.0.0.1:${port}/refused`, succeeded: false, kind: 'connection', status: null },
    ] as const;
    for (const c of cases) {
      const merchantAccount = uniqueMerchant('o7');
      const endpoint = await insertEndpoint(database.db, { merchantAccount, url: c.url });
      const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
      const before = receiver.received.length;
      const result = await activities().attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
      expect(result.outcome, c.url).toBe(c.succeeded ? 'delivered' : 'failed');
      expect(result.errorKind, c.url).toBe(c.kind);
      const [row] = await attemptRows(deliveryId);
      expect(row, c.url).toMatchObject({ attemptNumber: 1, succeeded: c.succeeded, errorKind: c.kind, responseStatus: c.status });
      expect(row!.latencyMs).toBeGreaterThanOrEqual(0);
      if (c.kind === 'timeout') expect(row!.latencyMs).toBeGreaterThanOrEqual(350);
      if (c.kind === 'server_error') expect(Buffer.byteLength(row!.responseExcerpt ?? '')).toBe(16); // capped
      if (c.kind === 'redirect') {
        await new Promise((r) => setTimeout(r, 100));
        expect(receiver.received.length - before).toBe(1); // the Location was not followed
      }
      const [delivery] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
      expect(delivery!.status).toBe(c.succeeded ? 'DELIVERED' : 'RETRYING');
      expect(delivery!.attemptCount).toBe(1);
      if (!c.succeeded) expect(delivery!.nextAttemptAt).not.toBeNull();
    }
  });

  it('O8 the POST carries the stored bytes and an ApiPay-Signature that verifies with the endpoint secret', async () => {
    const merchantAccount = uniqueMerchant('o8');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/ok/o8` });
    const { deliveryId, body } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    await activities().attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
    const request = receiver.received.filter((r) => r.path === '/ok/o8').at(-1)!;
    expect(request.body.equals(body)).toBe(true);
    expect(request.headers['content-type']).toBe('application/json');
    expect(verify(request.body, request.headers['apipay-signature'] as string, endpoint.secret)).toHaveProperty('timestamp');
  });

  it('O7 an attempt number is POSTed and recorded once even when the activity is retried', async () => {
    const merchantAccount = uniqueMerchant('o7once');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/server/once` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const count = () => receiver.received.filter((r) => r.path === '/server/once').length;

    // Finished attempt, activity retried (e.g. its completion was lost): same outcome, no second POST.
    const first = await activities().attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
    const again = await activities().attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
    expect(again).toEqual(first);
    expect(count()).toBe(1);

    // Reserved but never finished, longer ago than the lease (the worker died mid-POST): the retry records it as
    // interrupted, no POST.
    const expired = new Date(Date.now() - 2_500);
    await database.db.insert(deliveryAttempts).values({ deliveryId, attemptNumber: 2, startedAt: expired, latencyMs: 0, succeeded: false, errorKind: 'in_flight' });
    const interrupted = await activities().attemptDelivery({ deliveryId, attemptNumber: 2, scheduledAt: Date.now(), retryInMs: 300_000 });
    expect(interrupted).toMatchObject({ outcome: 'failed', errorKind: 'interrupted' });
    expect(count()).toBe(1);
    const rows = await attemptRows(deliveryId);
    expect(rows.map((r) => [r.attemptNumber, r.errorKind])).toEqual([
      [1, 'server_error'],
      [2, 'interrupted'],
    ]);
    const [delivery] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
    expect(delivery).toMatchObject({ status: 'RETRYING', attemptCount: 2 });
  });

  it('R3 a retry that runs while the first execution is still POSTing waits for its 2xx: one POST, DELIVERED, both report delivered', async () => {
    // A timed-out activity (or a local activity run again with its workflow task) is retried beside the execution
    // it replaces; that one is alive, mid-POST. Marking its attempt interrupted would drop the 2xx and POST again.
    const merchantAccount = uniqueMerchant('r3beside');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/late-ok/beside` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const input = { deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 };
    const first = activities().attemptDelivery(input);
    await new Promise((r) => setTimeout(r, 100)); // the first has reserved attempt 1 and is waiting for the answer
    const retried = await activities().attemptDelivery(input);
    expect(await first).toMatchObject({ outcome: 'delivered', responseStatus: 200 });
    expect(retried).toMatchObject({ outcome: 'delivered', responseStatus: 200 });
    expect(receiver.received.filter((r) => r.path === '/late-ok/beside')).toHaveLength(1);
    expect((await attemptRows(deliveryId)).map((r) => [r.attemptNumber, r.succeeded, r.errorKind])).toEqual([[1, true, null]]);
    const [delivery] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
    expect(delivery).toMatchObject({ status: 'DELIVERED', attemptCount: 1 });
  });

  it('R3 an attempt in flight within its lease and never finished: the retry waits out the lease, then records it interrupted without a POST', async () => {
    const merchantAccount = uniqueMerchant('r3lease');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/ok/lease` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const reservedAt = Date.now();
    await database.db.insert(deliveryAttempts).values({ deliveryId, attemptNumber: 1, startedAt: new Date(reservedAt), latencyMs: 0, succeeded: false, errorKind: 'in_flight' });
    const result = await activities().attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
    expect(result).toMatchObject({ outcome: 'failed', errorKind: 'interrupted' });
    expect(Date.now() - reservedAt).toBeGreaterThanOrEqual(2_000); // not before the lease (2 s) ended
    expect(receiver.received.some((r) => r.path === '/ok/lease')).toBe(false);
  });

  it('O13 a disabled endpoint is not attempted: recorded as endpoint_disabled, delivery FAILED, no POST', async () => {
    const merchantAccount = uniqueMerchant('o13off');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/ok/disabled`, status: 'disabled' });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const result = await activities().attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
    expect(result).toMatchObject({ outcome: 'failed', errorKind: 'endpoint_disabled', stopRetrying: true });
    expect(receiver.received.some((r) => r.path === '/ok/disabled')).toBe(false);
    const [delivery] = await database.db.select().from(deliveries).where(eq(deliveries.id, deliveryId));
    expect(delivery!.status).toBe('FAILED');
    expect(delivery!.failedAt).not.toBeNull();
  });

  it('O15 a loopback URL is refused again at send time when the profile does not allow it', async () => {
    const strict = createDeliveryActivities({
      db: database.db,
      profile: testProfile({ outbound: { allow_insecure_urls: false } }),
      logger: testLogger,
      secretsKey: TEST_SECRETS_KEY,
    });
    const merchantAccount = uniqueMerchant('o15');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/ok/unsafe` });
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    const result = await strict.attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: null });
    expect(result).toMatchObject({ outcome: 'failed', errorKind: 'unsafe_url' });
    expect(receiver.received.some((r) => r.path === '/ok/unsafe')).toBe(false);
    const [row] = await database.db
      .select()
      .from(deliveryAttempts)
      .where(and(eq(deliveryAttempts.deliveryId, deliveryId), eq(deliveryAttempts.attemptNumber, 1)));
    expect(row!.errorKind).toBe('unsafe_url');
  });

  it('O15 the POST connects to the address the send-time check vetted, even if DNS answers differently a second time', async () => {
    // DNS rebinding: the first answer (the one checked) is the merchant, every later answer is somewhere else. Here
    // "somewhere else" is a second server on 127.0.0.2, same port, standing in for an internal service.
    const port = Number(new URL(receiver.url).port);
    const attacker: string[] = [];
    const internal = createHttpServer((req, res) => {
      attacker.push(req.url ?? '/');
      res.end('internal');
    });
    await new Promise<void>((resolve) => internal.listen(port, '127.0.0.2', resolve));
    expect((internal.address() as AddressInfo).port).toBe(port);
    let lookups = 0;
    const rebinding: LookupAll = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const agents = createPinnedAgents();
    try {
      const pinned = createDeliveryActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY, lookup: rebinding, agents });
      const merchantAccount = uniqueMerchant('o15rebind');
      // .invalid never resolves in real DNS either: the POST can only have connected through the vetted address.
      const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `http://rebind.invalid:${port}/ok/rebind` });
      const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
      const result = await pinned.attemptDelivery({ deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 });
      expect(result).toMatchObject({ outcome: 'delivered', responseStatus: 204, errorKind: null });
      const hit = receiver.received.find((r) => r.path === '/ok/rebind');
      expect(hit?.headers.host).toBe(`rebind.invalid:${port}`); // the name, not the address, in the Host header
      expect(attacker).toEqual([]);
      expect(lookups).toBe(1);
      // The next attempt checks again (answer 2: 127.0.0.2, allowed in this local profile) and goes there: each POST
      // connects where its own check looked, never to an earlier or later answer.
      const next = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
      const second = await pinned.attemptDelivery({ deliveryId: next.deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: null });
      expect(second).toMatchObject({ outcome: 'delivered', responseStatus: 200 });
      expect(attacker).toEqual(['/ok/rebind']);
      expect(lookups).toBe(2);
    } finally {
      await agents.close();
      internal.closeAllConnections();
      await new Promise((resolve) => internal.close(resolve));
    }
  });

  it('O18/R13 a retried attempt that re-applies a recorded 429 lowers the rate once, not once per execution', async () => {
    const merchantAccount = uniqueMerchant('busy');
    const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/busy` });
    await database.db.update(webhookEndpoints).set({ rateLimitPerSecond: 8 }).where(eq(webhookEndpoints.id, endpoint.id));
    const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
    // Admitted (slotAt): the throttle's slot was taken before, as the workflow does after a wait.
    const input = { deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000, slotAt: Date.now() };
    const rate = async () =>
      (await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id)))[0]!.backoffRatePerSecond;
    expect((await activities().attemptDelivery(input)).responseStatus).toBe(429);
    expect(await rate()).toBe(4);
    // The same scheduled attempt again (the activity retried after its completion was lost): nothing new happened.
    expect((await activities().attemptDelivery(input)).responseStatus).toBe(429);
    expect(await rate()).toBe(4);
    expect(receiver.received.filter((r) => r.path.startsWith('/busy'))).toHaveLength(1);
  });
});
