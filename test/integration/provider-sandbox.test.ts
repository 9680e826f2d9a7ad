// The provider sandbox (the only stand-in, for the provider outside our system): its payments API and switches,
// and signed webhooks that our real ingress (over HTTP, on PostgreSQL) accepts, duplicated and out of order on demand.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/app.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { DEMO_SCENARIOS, httpSandboxDriver, type SandboxDriver } from '../../src/sandbox/demo.js';
import { sandboxProvidersFromProfile, startProviderSandbox, type ProviderSandbox } from '../../src/sandbox/provider.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { inboundTestProfile, storedFor, uniqueReference } from '../helpers/inbound.js';
import { connectDevServer, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let api: ServerType;
let sandbox: ProviderSandbox;
const { profile, stripe, hmac } = inboundTestProfile('sbx');
let random = 0.99;

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  const app = testApp({
    db: database.db,
    temporal: temporal.client,
    profile,
    taskQueues: uniqueTaskQueues('sandbox'),
    ingress: { starter: null }, // this file tests the sandbox, not reconciliation
  });
  api = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise((r) => api.once('listening', r));
  const ingressUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  sandbox = await startProviderSandbox({ port: 0, ingressUrl, providers: sandboxProvidersFromProfile(profile), random: () => random });
});
afterAll(async () => {
  await sandbox.close();
  await new Promise((r) => api.close(r));
  await temporal.close();
  await database.close();
});

const get = async (path: string) => {
  const response = await fetch(`${sandbox.url}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};
const put = (path: string, body: unknown) =>
  fetch(`${sandbox.url}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('provider sandbox: payments API (I8 contract)', () => {
  it('I8 serves GET {api_base_url}/payments/{reference}: 200 ProviderPayment, 404 unknown', async () => {
    const reference = uniqueReference();
    expect((await put(`/stripe/payments/${reference}`, { status: 'succeeded', amountMinor: 1200, currency: 'eur' })).status).toBe(200);
    expect(await get(`/stripe/payments/${reference}`)).toEqual({ status: 200, body: { reference, status: 'succeeded', amountMinor: '1200', currency: 'EUR' } });
    expect((await get(`/hmac/payments/${reference}`)).status).toBe(404); // each provider has its own books
    expect((await get(`/stripe/payments/${uniqueReference()}`)).status).toBe(404);
    expect((await put(`/stripe/payments/${reference}`, { status: 'maybe', amountMinor: 1, currency: 'EUR' })).status).toBe(400);
  });

  it('I8/I14 switches: outage, 5xx rate, latency and amount mismatch, set over the control endpoint and in code', async () => {
    const reference = uniqueReference();
    sandbox.upsertPayment(stripe, reference, { status: 'succeeded', amountMinor: '1000', currency: 'USD' });
    try {
      expect((await put('/control/switches', { outage: true })).status).toBe(200);
      expect((await get(`/stripe/payments/${reference}`)).status).toBe(503);
      sandbox.setSwitches({ outage: false, errorRate: 0.5 });
      random = 0.1;
      expect((await get(`/stripe/payments/${reference}`)).status).toBe(503);
      random = 0.9;
      expect((await get(`/stripe/payments/${reference}`)).status).toBe(200);
      sandbox.setSwitches({ errorRate: 0, amountMismatch: true, latencyMs: 150 });
      const started = Date.now();
      const mismatched = await get(`/stripe/payments/${reference}`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(mismatched.body.amountMinor).toBe('1001');
      expect((await put('/control/switches', { errorRate: 2 })).status).toBe(400);
      expect((await get('/control/switches')).body).toMatchObject({ amountMismatch: true, latencyMs: 150 });
    } finally {
      sandbox.resetSwitches();
    }
    expect((await get(`/stripe/payments/${reference}`)).body.amountMinor).toBe('1000');
  });

  it('I8 per-payment 5xx and per-reference query counts, in code and over /control; delete makes it unknown again', async () => {
    const reference = uniqueReference();
    const other = uniqueReference();
    sandbox.upsertPayment(stripe, reference, { status: 'succeeded', amountMinor: 500, currency: 'EUR' });
    sandbox.upsertPayment(stripe, other, { status: 'succeeded', amountMinor: 500, currency: 'EUR' });
    sandbox.setPaymentFailing(stripe, reference);
    try {
      expect((await get(`/stripe/payments/${reference}`)).status).toBe(503);
      expect((await get(`/stripe/payments/${other}`)).status).toBe(200); // only that payment fails
      const unknown = uniqueReference();
      expect((await put(`/control/failing/stripe/${unknown}`, { failing: true })).status).toBe(200);
      expect((await get(`/stripe/payments/${unknown}`)).status).toBe(503); // failing even with no payment
      expect((await put(`/control/failing/stripe/${reference}`, { failing: false })).status).toBe(200);
      expect((await get(`/stripe/payments/${reference}`)).status).toBe(200);
      expect((await put(`/control/failing/stripe/${reference}`, { failing: 'yes' })).status).toBe(400);
      expect(sandbox.hits(stripe, reference)).toBe(2);
      expect(sandbox.hits(hmac, reference)).toBe(0); // counted per provider
      expect((await get(`/control/hits/stripe/${other}`)).body).toEqual({ reference: other, hits: 1 });
      expect((await fetch(`${sandbox.url}/stripe/payments/${other}`, { method: 'DELETE' })).status).toBe(200);
      expect((await get(`/stripe/payments/${other}`)).status).toBe(404);
      expect(sandbox.deletePayment(stripe, other)).toBe(false);
      sandbox.setPaymentFailing(stripe, reference);
    } finally {
      sandbox.resetSwitches();
    }
    expect((await get(`/stripe/payments/${reference}`)).status).toBe(200); // reset clears per-payment failures
  });
});

describe('provider sandbox: signed webhooks to our ingress', () => {
  it('I1 both providers sign webhooks the real ingress accepts and stores', async () => {
    for (const provider of [stripe, hmac]) {
      const reference = uniqueReference();
      sandbox.upsertPayment(provider, reference, { status: 'succeeded', amountMinor: 2500, currency: 'EUR' });
      const result = await sandbox.sendWebhook(provider, { type: 'payment.succeeded', reference });
      expect(result.deliveries.map((d) => d.status)).toEqual([200]);
      expect(await storedFor(database.db, provider, result.eventId)).toMatchObject({ registry: 1, receipts: 1 });
    }
  });

  it('I5 the duplicates switch delivers each webhook again: the ingress acknowledges each, stores one', async () => {
    const reference = uniqueReference();
    sandbox.upsertPayment(hmac, reference, { status: 'succeeded', amountMinor: 10, currency: 'EUR' });
    sandbox.setSwitches({ duplicates: 2 });
    try {
      const result = await sandbox.sendWebhook(hmac, { type: 'payment.succeeded', reference });
      expect(result.deliveries.map((d) => [d.status, JSON.parse(d.body).duplicate])).toEqual([[200, false], [200, true], [200, true]]);
      expect(await storedFor(database.db, hmac, result.eventId)).toMatchObject({ registry: 1, receipts: 1 });
    } finally {
      sandbox.resetSwitches();
    }
  });

  it('I10 out-of-order delivery sends the refund before the capture', async () => {
    const reference = uniqueReference();
    sandbox.upsertPayment(stripe, reference, { status: 'refunded', amountMinor: 900, currency: 'EUR' });
    sandbox.setSwitches({ outOfOrder: true });
    try {
      const [capture, refund] = await sandbox.sendWebhooks(stripe, [
        { type: 'payment.succeeded', reference },
        { type: 'refund.succeeded', reference, amountMinor: 300 },
      ]);
      const first = await storedFor(database.db, stripe, capture!.eventId);
      const second = await storedFor(database.db, stripe, refund!.eventId);
      expect(Number(second.receipt!.id)).toBeLessThan(Number(first.receipt!.id)); // the refund arrived first
      expect(JSON.parse(refund!.body).type).toBe('refund.created');
    } finally {
      sandbox.resetSwitches();
    }
  });

  it('I1 POST /{provider}/webhooks sends one from the control API (demo and curl use)', async () => {
    const reference = uniqueReference();
    await put(`/hmac/payments/${reference}`, { status: 'failed', amountMinor: 77, currency: 'GBP' });
    const response = await fetch(`${sandbox.url}/hmac/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'payment.failed', reference }),
    });
    const result = (await response.json()) as { eventId: string; deliveries: { status: number }[] };
    expect(result.deliveries[0]!.status).toBe(200);
    expect((await storedFor(database.db, hmac, result.eventId)).receipts).toBe(1);
  });

  it('I1 every demo scenario, driven over the sandbox HTTP API, gets its webhooks acknowledged by the ingress', async () => {
    const http = httpSandboxDriver(sandbox.url);
    const answers: { eventId: string; statuses: number[]; duplicate: boolean[] }[] = [];
    const driver: SandboxDriver = {
      upsertPayment: http.upsertPayment,
      async sendWebhook(provider, event) {
        const result = await http.sendWebhook(provider, event);
        answers.push({ eventId: result.eventId, statuses: result.deliveries.map((d) => d.status), duplicate: result.deliveries.map((d) => JSON.parse(d.body).duplicate) });
        return result;
      },
    };
    for (const scenario of Object.values(DEMO_SCENARIOS)) await scenario(driver, stripe);
    expect(answers.length).toBe(9); // 1 + 1 + 1 + 1 + 3 + 2 webhooks
    expect(answers.every((a) => a.statuses.every((s) => s === 200))).toBe(true);
    expect(answers.filter((a) => a.duplicate[0] === true)).toHaveLength(2); // the two redeliveries
    for (const a of answers) expect((await storedFor(database.db, stripe, a.eventId)).receipts).toBe(1);
  });
});
