// The provider ingress on the real PostgreSQL and Temporal dev server: I1 Stripe interop, I3 refusals with nothing
// stored, I4 durable receipt before 200, I5 duplicates (cache, registry after expiry, concurrent), the bad-input
// corpus (requirements §7) and the registry's immutability.
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import Stripe from 'stripe';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/app.js';
import type { Database } from '../../src/db/client.js';
import { createDedupeCache } from '../../src/inbound/dedupe-cache.js';
import { createReconciliationStarter, type ReconciliationStarter } from '../../src/inbound/reconciliation-starter.js';
import { createGroupCommitWriter } from '../../src/inbound/receipt-writer.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import type { ReconciliationInput } from '../../src/shared/inbound.js';
import {
  hmacPayload,
  hmacRequest,
  inboundTestProfile,
  reconciliationOf,
  runsOf,
  storedFor,
  stripeEvent,
  stripeRequest,
  terminateAll,
  uniqueReference,
} from '../helpers/inbound.js';
import { TEST_PROVIDER_SECRETS } from '../helpers/profile.js';
import { testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

const json = async (response: Response): Promise<any> => response.json();

let database: Database;
let temporal: World['temporal'];
const started = new Set<string>();
const { profile, stripe, hmac } = inboundTestProfile('ing');
const taskQueues = uniqueTaskQueues('ingress');

const world = useWorld({ label: 'inbound-ingress' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
});
afterAll(async () => {
  await terminateAll(temporal.client, started);
});

/** An app with a clock the test controls and a starter it can wait for; enqueued inputs are recorded. */
function ingress(options: { clock?: { now: Date }; startWorkflows?: boolean } = {}) {
  const clock = options.clock ?? { now: new Date() };
  const enqueued: ReconciliationInput[] = [];
  let starter: ReconciliationStarter | null = null;
  if (options.startWorkflows !== false) {
    const real = createReconciliationStarter({
      db: database.db,
      temporal: temporal.client,
      profile,
      taskQueue: taskQueues.reconciliation,
      logger: testLogger,
    });
    starter = {
      enqueue(receiptId, input) {
        enqueued.push(input);
        started.add(reconciliationWorkflowId(input.provider, input.event.providerEventId));
        return real.enqueue(receiptId, input);
      },
      idle: () => real.idle(),
    };
  }
  const writer = createGroupCommitWriter({ db: database.db });
  const cache = createDedupeCache({ ttlMs: profile.inbound.dedupe_store_ttl_days * 86_400_000, now: () => clock.now.getTime() });
  const app = testApp({
    db: database.db,
    temporal: temporal.client,
    profile,
    taskQueues,
    now: () => clock.now,
    ingress: { writer, cache, starter },
  });
  return { app, clock, writer, enqueued, idle: () => starter?.idle() ?? Promise.resolve() };
}

describe('I1/I4 accepted webhooks', () => {
  it('I1 a webhook signed by the Stripe npm library is accepted, stored raw, and its reconciliation started with the right id and input', async () => {
    const { app, idle } = ingress();
    const reference = uniqueReference();
    const { id, body } = stripeEvent({ reference, amountMinor: 4200, currency: 'usd' });
    const header = new Stripe('sk_test_x').webhooks.generateTestHeaderString({ payload: body, secret: TEST_PROVIDER_SECRETS.SANDBOX_STRIPE_WEBHOOK_SECRET });
    const response = await app.request(`/webhooks/${stripe}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'stripe-signature': header, 'user-agent': 'Stripe/1.0', cookie: 'not-kept' },
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ received: true, duplicate: false });

    // I4: durable before the 200 — the row is there the moment the answer is.
    const stored = await storedFor(database.db, stripe, id);
    expect(stored.registry).toBe(1);
    expect(stored.receipts).toBe(1);
    expect(Buffer.from(stored.receipt!.raw_body).toString('utf8')).toBe(body);
    expect(stored.receipt!.headers).toEqual({ 'content-type': 'application/json', 'user-agent': 'Stripe/1.0', 'stripe-signature': header });

    await idle();
    const workflow = await reconciliationOf(temporal.client, stripe, id);
    expect(workflow?.description.workflowId).toBe(`reconcile:${stripe}:${id}`);
    expect(workflow?.description.type).toBe('reconciliationWorkflow');
    expect(workflow?.description.taskQueue).toBe(taskQueues.reconciliation);
    expect(workflow?.input).toMatchObject({
      provider: stripe,
      receiptId: Number(stored.receipt!.id),
      event: { providerEventId: id, type: 'payment.succeeded', paymentReference: reference, amountMinor: '4200', currency: 'USD' },
    });
    expect((await storedFor(database.db, stripe, id)).receipt!.workflow_started_at).not.toBeNull();
  });

  it('I1 the generic HMAC provider is accepted with its own header and payload format', async () => {
    const { app, idle } = ingress();
    const { id, body } = hmacPayload({ type: 'payment.failed', reference: uniqueReference(), amountMinor: 500, currency: 'GBP' });
    const response = await app.request(`/webhooks/${hmac}`, hmacRequest(body));
    expect(response.status).toBe(200);
    const stored = await storedFor(database.db, hmac, id);
    expect(stored.receipts).toBe(1);
    expect(stored.receipt!.headers['x-sandbox-signature']).toBeDefined();
    await idle();
    expect((await reconciliationOf(temporal.client, hmac, id))?.input).toMatchObject({ event: { type: 'payment.failed', currency: 'GBP' } });
  });
});

describe('I3 invalid signatures: 401, nothing stored, no workflow', () => {
  const now = new Date();
  const t = Math.floor(now.getTime() / 1000);
  const { id, body } = stripeEvent();
  const sign = (secret: string, at: number) => `t=${at},v1=${new Stripe('sk').webhooks.generateTestHeaderString({ payload: body, secret, timestamp: at }).split('v1=')[1]}`;
  it.each([
    ['invalid (wrong secret)', { 'stripe-signature': sign('whsec_attacker', t) }],
    ['missing', {}],
    ['malformed', { 'stripe-signature': 'garbage' }],
    ['stale (10 minutes old)', { 'stripe-signature': sign(TEST_PROVIDER_SECRETS.SANDBOX_STRIPE_WEBHOOK_SECRET, t - 600) }],
    ['future (10 minutes ahead)', { 'stripe-signature': sign(TEST_PROVIDER_SECRETS.SANDBOX_STRIPE_WEBHOOK_SECRET, t + 600) }],
  ])('I3 %s signature', async (_name, signature) => {
    const { app, idle, enqueued } = ingress({ clock: { now } });
    const response = await app.request(`/webhooks/${stripe}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signature } });
    expect(response.status).toBe(401);
    expect((await json(response)).error.code).toBe('invalid_signature');
    await idle();
    expect(await storedFor(database.db, stripe, id)).toMatchObject({ registry: 0, receipts: 0 });
    expect(enqueued).toHaveLength(0);
    expect(await reconciliationOf(temporal.client, stripe, id)).toBeNull();
  });

  it('I3 an HMAC signature of another body is refused and nothing is stored', async () => {
    const { app } = ingress();
    const { id, body: hmacBody } = hmacPayload({ type: 'payment.succeeded', reference: uniqueReference(), amountMinor: 1, currency: 'EUR' });
    const forged = hmacRequest(hmacBody.replace('"amount_minor":"1"', '"amount_minor":"100000"'));
    (forged.headers as Record<string, string>)['x-sandbox-signature'] = (hmacRequest(hmacBody).headers as Record<string, string>)['x-sandbox-signature']!;
    const response = await app.request(`/webhooks/${hmac}`, forged);
    expect(response.status).toBe(401);
    expect(await storedFor(database.db, hmac, id)).toMatchObject({ registry: 0, receipts: 0 });
  });

  it('I3/I13 rejections, acknowledgements and duplicates are counted on /metrics, apart from each other', async () => {
    const { app } = ingress({ startWorkflows: false });
    const { body } = stripeEvent();
    await app.request(`/webhooks/${stripe}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    await app.request(`/webhooks/${stripe}`, stripeRequest(body));
    await app.request(`/webhooks/${stripe}`, stripeRequest(body));
    const text = await (await app.request('/metrics')).text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(value(`apipay_inbound_signature_rejections_total{provider="${stripe}",reason="missing_signature"}`)).toBeGreaterThanOrEqual(1);
    expect(value(`apipay_inbound_webhooks_acknowledged_total{provider="${stripe}",result="new"}`)).toBeGreaterThanOrEqual(1);
    expect(value(`apipay_inbound_duplicates_total{provider="${stripe}",source="cache"}`)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(new RegExp(`apipay_inbound_ack_latency_seconds_count\\{provider="${stripe}"\\} \\d+`));
  });
});

describe('I4/I5 duplicates change nothing', () => {
  it('I5 a duplicate inside the TTL is answered by the cache; after the cache expired the registry answers; nothing new either time', async () => {
    const clock = { now: new Date() };
    const { app, writer, enqueued, idle } = ingress({ clock });
    const { id, body } = stripeEvent();
    const first = await app.request(`/webhooks/${stripe}`, stripeRequest(body, clock.now));
    expect(await json(first)).toEqual({ received: true, duplicate: false });
    const before = await storedFor(database.db, stripe, id);
    const transactions = writer.stats.transactions;

    // Inside the TTL: the cache answers, not even a database transaction.
    clock.now = new Date(clock.now.getTime() + 6 * 86_400_000);
    const inside = await app.request(`/webhooks/${stripe}`, stripeRequest(body, clock.now));
    expect(inside.status).toBe(200);
    expect(await json(inside)).toEqual({ received: true, duplicate: true });
    expect(writer.stats.transactions).toBe(transactions);

    // Past dedupe_store_ttl_days (7): the cache has forgotten, the registry refuses the second insert.
    clock.now = new Date(clock.now.getTime() + 2 * 86_400_000);
    const after = await app.request(`/webhooks/${stripe}`, stripeRequest(body, clock.now));
    expect(after.status).toBe(200);
    expect(await json(after)).toEqual({ received: true, duplicate: true });
    expect(writer.stats.transactions).toBe(transactions + 1);
    expect(writer.stats.receipts).toBe(1);

    await idle();
    const now = await storedFor(database.db, stripe, id);
    expect(now).toMatchObject({ registry: 1, receipts: 1 });
    expect(now.receipt!.id).toBe(before.receipt!.id);
    expect(now.receipt!.headers).toEqual(before.receipt!.headers); // the first delivery's signature, untouched
    expect(enqueued).toHaveLength(1);
  });

  it('I5 two concurrent deliveries of the same new event: exactly one registry row, one receipt, one workflow', async () => {
    // Two separate apps: the second delivery cannot be answered by the first one's cache.
    const a = ingress();
    const b = ingress();
    const { id, body } = stripeEvent();
    const [ra, rb] = await Promise.all([
      a.app.request(`/webhooks/${stripe}`, stripeRequest(body)),
      b.app.request(`/webhooks/${stripe}`, stripeRequest(body)),
    ]);
    const answers = [await json(ra), await json(rb)].map((x) => x.duplicate).sort();
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(answers).toEqual([false, true]);
    await Promise.all([a.idle(), b.idle()]);
    expect(await storedFor(database.db, stripe, id)).toMatchObject({ registry: 1, receipts: 1 });
    expect(a.enqueued.length + b.enqueued.length).toBe(1);
    const workflowId = reconciliationWorkflowId(stripe, id);
    expect(await runsOf(temporal.client, workflowId)).toHaveLength(1);
  });

  it('I5 many concurrent deliveries of one event into one app (one group-commit batch): one winner', async () => {
    const { app, enqueued, idle } = ingress();
    const { id, body } = stripeEvent();
    const responses = await Promise.all(Array.from({ length: 8 }, () => app.request(`/webhooks/${stripe}`, stripeRequest(body))));
    const flags = await Promise.all(responses.map(async (r) => (await json(r)).duplicate));
    expect(flags.filter((d) => d === false)).toHaveLength(1);
    await idle();
    expect(enqueued).toHaveLength(1);
    expect(await storedFor(database.db, stripe, id)).toMatchObject({ registry: 1, receipts: 1 });
  });
});

describe('§7 bad input: a clear status and nothing stored', () => {
  const limit = profile.inbound.max_body_bytes;

  it('§7 unknown provider → 404', async () => {
    const { app } = ingress();
    const { body } = stripeEvent();
    const response = await app.request('/webhooks/no-such-provider', stripeRequest(body));
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe('not_found');
  });

  it.each([
    ['invalid JSON after a valid signature', () => ({ id: `evt_bad_${uniqueReference()}`, body: '{"id": "evt_x", "type": ' }), /not valid JSON/],
    ['invalid UTF-8 after a valid signature', () => ({ id: `evt_bad_${uniqueReference()}`, body: Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]) }), /UTF-8/],
    ['a missing amount', () => { const e = stripeEvent(); return { id: e.id, body: e.body.replace(/"amount":\d+,/, '') }; }, /body\.data\.object\.amount/],
    ['a missing event id', () => { const e = stripeEvent(); return { id: e.id, body: e.body.replace(/"id":"evt_[^"]+",/, '') }; }, /body\.id/],
    // R21: out of range answered 500 (RangeError from toISOString) and the provider retried it forever
    ['R21 created: 9999999999999 (out of the Date range)', () => { const e = stripeEvent(); return { id: e.id, body: e.body.replace(/"created":\d+/, '"created":9999999999999') }; }, /body\.created/],
    ['R21 created after 9999-12-31', () => { const e = stripeEvent(); return { id: e.id, body: e.body.replace(/"created":\d+/, '"created":253402300800') }; }, /body\.created/],
  ])('§7 %s → 400 invalid_payload, nothing stored', async (_name, make, message) => {
    const { app, enqueued } = ingress();
    const { id, body } = make();
    const response = await app.request(`/webhooks/${stripe}`, stripeRequest(body));
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error.code).toBe('invalid_payload');
    expect(error.message).toMatch(message);
    expect(await storedFor(database.db, stripe, id)).toMatchObject({ registry: 0, receipts: 0 });
    expect(enqueued).toHaveLength(0);
  });

  it.each([
    ['year 0000', '0000-06-01T00:00:00Z'],
    ['a year past 9999', '+010000-01-01T00:00:00Z'],
    ['a six-digit year', '+275760-09-13T00:00:00Z'],
  ])('R21 an hmac occurred_at in %s → 400 naming body.occurred_at, nothing stored', async (_name, occurredAt) => {
    const { app, enqueued } = ingress();
    const payload = hmacPayload({ type: 'payment.succeeded', reference: uniqueReference(), amountMinor: 1999, currency: 'EUR' });
    const body = payload.body.replace(/"occurred_at":"[^"]+"/, `"occurred_at":${JSON.stringify(occurredAt)}`);
    expect(body).toContain(occurredAt);
    const response = await app.request(`/webhooks/${hmac}`, hmacRequest(body));
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toMatch(/body\.occurred_at/);
    expect(await storedFor(database.db, hmac, payload.id)).toMatchObject({ registry: 0, receipts: 0 });
    expect(enqueued).toHaveLength(0);
  });

  it('§7 an unhandled event type is acknowledged as ignored (the provider would retry it forever) and not stored', async () => {
    const { app } = ingress();
    const body = JSON.stringify({ id: `evt_${uniqueReference()}`, type: 'customer.created', created: 1, data: { object: {} } });
    const response = await app.request(`/webhooks/${stripe}`, stripeRequest(body));
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ received: true, ignored: true });
    expect(await storedFor(database.db, stripe, JSON.parse(body).id)).toMatchObject({ registry: 0, receipts: 0 });
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['JSON in Latin-1', 'application/json; charset=iso-8859-1'],
    ['no content type', undefined],
  ])('§7 wrong content type (%s) → 415, nothing stored', async (_name, contentType) => {
    const { app } = ingress();
    const { id, body } = stripeEvent();
    const init = stripeRequest(body);
    const headers = init.headers as Record<string, string>;
    if (contentType) headers['content-type'] = contentType;
    else delete headers['content-type'];
    const response = await app.request(`/webhooks/${stripe}`, { ...init, body: new TextEncoder().encode(body) });
    expect(response.status).toBe(415);
    expect((await json(response)).error.code).toBe('unsupported_media_type');
    expect(await storedFor(database.db, stripe, id)).toMatchObject({ registry: 0, receipts: 0 });
  });

  it('§7 oversized body → 413 payload_too_large, whether declared or streamed; nothing stored', async () => {
    const { app } = ingress();
    const { id, body } = stripeEvent();
    const padded = body.replace('"livemode":false', `"livemode":false,"pad":"${'x'.repeat(limit)}"`);
    const streamed = await app.request(`/webhooks/${stripe}`, stripeRequest(padded));
    expect(streamed.status).toBe(413);
    expect((await json(streamed)).error.code).toBe('payload_too_large');
    const declared = stripeRequest(padded, new Date(), { 'content-length': String(Buffer.byteLength(padded)) });
    expect((await app.request(`/webhooks/${stripe}`, declared)).status).toBe(413);
    expect(await storedFor(database.db, stripe, id)).toMatchObject({ registry: 0, receipts: 0 });
  });

  it('§7 oversized body over a real socket: the client gets the 413, not a reset', async () => {
    const { app } = ingress();
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    try {
      const { body } = stripeEvent();
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, path: `/webhooks/${stripe}`, method: 'POST', headers: { ...(stripeRequest(body).headers as Record<string, string>), 'transfer-encoding': 'chunked' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        const chunk = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < limit * 4) {
            sent += chunk.length;
            if (!req.write(chunk)) return req.once('drain', pump);
          }
          req.end();
        };
        pump();
      });
      expect(status).toBe(413);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('I5 the registry is immutable', () => {
  it('I5 UPDATE and DELETE of a registry row are refused by the database', async () => {
    const { app } = ingress({ startWorkflows: false });
    const { id, body } = stripeEvent();
    expect((await app.request(`/webhooks/${stripe}`, stripeRequest(body))).status).toBe(200);
    const refusal = (query: Promise<unknown>) =>
      query.then(
        () => 'allowed',
        (error: Error & { cause?: Error }) => (error.cause ?? error).message,
      );
    expect(await refusal(database.db.execute(sql`update provider_event_registry set registered_at = now() where provider = ${stripe} and provider_event_id = ${id}`))).toMatch(/append-only: UPDATE refused/);
    expect(await refusal(database.db.execute(sql`delete from provider_event_registry where provider = ${stripe} and provider_event_id = ${id}`))).toMatch(/append-only: DELETE refused/);
    expect((await storedFor(database.db, stripe, id)).registry).toBe(1);
  });
});

