// Admin API for the outbound side on the real PostgreSQL and Temporal dev server: endpoints, deliveries, events
// (requirements §4, O9, O11, O12, O13, O15): auth, validation naming fields, stable pagination, secret shown once.
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { Parser } from '@asyncapi/parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import { runCli } from '../../src/cli/run.js';
import type { ApiDeps } from '../../src/api/deps.js';
import type { Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, endpointSecrets, events, webhookEndpoints } from '../../src/db/schema/index.js';
import { REDACT_PATHS } from '../../src/lib/logger.js';
import { signingSecretsFor } from '../../src/outbound/secrets.js';
import { newId } from '../../src/shared/ids.js';
import { DELIVERY_WORKFLOW } from '../../src/shared/outbound.js';
import { TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
const logLines: string[] = [];
const startedWorkflows: string[] = [];
// No worker polls these queues: a workflow started by a retry stays visible but untouched, and is terminated after.
const taskQueues = uniqueTaskQueues('admin-outbound');

function deps(overrides: Partial<ApiDeps> = {}): ApiDeps {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  return {
    db: database.db,
    temporal: temporal.client,
    profile: testProfile(),
    env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64') },
    taskQueues,
    logger: pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink),
    readiness: {},
    ...overrides,
  };
}

let app: ReturnType<typeof createApp>;
const world = useWorld({ label: 'admin-outbound' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  app = createApp(deps());
});
afterAll(async () => {
  for (const id of startedWorkflows) await temporal.client.workflow.getHandle(id).terminate('test cleanup').catch(() => undefined);
});

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = auth, on = app) {
  const init: RequestInit = { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await on.request(`/admin/v1${path}`, init);
  const text = await res.text();
  return { status: res.status, text, json: text ? (JSON.parse(text) as any) : undefined };
}

const merchant = () => `acct_${newId('smk').slice(4)}`;
const createBody = (account: string, extra: Record<string, unknown> = {}) => ({
  merchant_account: account,
  url: 'http://127.0.0.1:4999/hooks',
  event_types: ['payment.succeeded'],
  livemode: false,
  ...extra,
});

/** An event and one delivery per given status, for an endpoint created through the API. */
async function seedDeliveries(endpointId: string, account: string, statuses: Array<'PENDING' | 'RETRYING' | 'DELIVERED' | 'FAILED'>) {
  const eventId = `evt_${newId('smk').slice(4)}`;
  const body = Buffer.from(JSON.stringify({ id: eventId, object: 'event', type: 'payment.succeeded', created: 1_780_000_000, livemode: false, data: { object: { amount: 100 } } }));
  await database.db.insert(events).values({ eventPublicId: eventId, merchantAccount: account, type: 'payment.succeeded', livemode: false, createdUnix: 1_780_000_000, body });
  const ids: string[] = [];
  for (const status of statuses) {
    // One delivery per (event, endpoint): each extra one gets its own event.
    const evt = ids.length === 0 ? eventId : `evt_${newId('smk').slice(4)}`;
    if (evt !== eventId) await database.db.insert(events).values({ eventPublicId: evt, merchantAccount: account, type: 'payment.succeeded', livemode: false, createdUnix: 1_780_000_000, body });
    const id = newId('whd');
    await database.db.insert(deliveries).values({
      id,
      eventPublicId: evt,
      endpointId,
      merchantAccount: account,
      status,
      attemptCount: status === 'FAILED' ? 6 : status === 'PENDING' ? 0 : 1,
      ...(status === 'FAILED' ? { failedAt: new Date() } : {}),
      ...(status === 'DELIVERED' ? { deliveredAt: new Date() } : {}),
    });
    ids.push(id);
  }
  return { eventId, ids };
}

async function createEndpoint(account = merchant(), extra: Record<string, unknown> = {}) {
  const res = await call('POST', '/webhook-endpoints', createBody(account, extra));
  expect(res.status).toBe(201);
  return res.json as { id: string; secret: string; merchant_account: string };
}

describe('admin API security', () => {
  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer not-the-admin-token-at-all' }],
    ['a non-bearer scheme', { authorization: `Basic ${TEST_ADMIN_TOKEN}` }],
  ])('§4 refuses %s with 401 and the error shape', async (_name, headers) => {
    for (const [method, path] of [
      ['GET', '/webhook-endpoints'],
      ['POST', '/webhook-endpoints'],
      ['GET', '/webhook-deliveries'],
      ['POST', '/webhook-deliveries/whd_x/retry'],
      ['GET', '/events/evt_x'],
    ] as const) {
      const res = await call(method, path, method === 'POST' ? {} : undefined, headers);
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('unauthorized');
      expect(typeof res.json.error.message).toBe('string');
      expect(res.json.error.requestId).toBeTruthy();
      expect(res.text).not.toContain(TEST_ADMIN_TOKEN);
    }
  });

  it('M10 the served OpenAPI 3.1 document (with the catalog as webhooks) validates; /asyncapi.json parses; both need no key', async () => {
    const openapi = await call('GET', '/openapi.json', undefined, {});
    const result = await new Validator().validate(openapi.json);
    expect(result.errors ?? []).toEqual([]);
    expect(openapi.json.webhooks['payment.succeeded'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Event.payment.succeeded.v1' });
    expect(openapi.json.webhooks['refund.created'].post.deprecated).toBe(true);
    const asyncapi = await call('GET', '/asyncapi.json', undefined, {});
    expect(asyncapi.status).toBe(200);
    const { diagnostics } = await new Parser().parse(asyncapi.text);
    expect(diagnostics.filter((d) => d.severity === 0)).toEqual([]);
  }, 60_000);

  it('§4 the OpenAPI document is served and lists the outbound paths', async () => {
    const res = await call('GET', '/openapi.json', undefined, {});
    expect(res.status).toBe(200);
    const paths = Object.keys(res.json.paths);
    for (const p of [
      '/webhook-endpoints',
      '/webhook-endpoints/{id}',
      '/webhook-endpoints/{id}/secret/rotate',
      '/webhook-endpoints/{id}/disable',
      '/webhook-endpoints/{id}/enable',
      '/webhook-endpoints/{id}/recover',
      '/webhook-deliveries',
      '/webhook-deliveries/{id}',
      '/webhook-deliveries/{id}/retry',
      '/events/{id}',
    ]) {
      expect(paths).toContain(p);
    }
    expect(res.json.paths['/webhook-endpoints'].post.responses['201']).toBeDefined();
  });
});

describe('webhook endpoints', () => {
  it('§4 create shows the secret once; get and list never show it; it is encrypted at rest and not logged', async () => {
    const account = merchant();
    const created = await createEndpoint(account, { event_types: ['payment.succeeded', 'payment.succeeded', 'refund.created'], description: 'orders' });
    expect(created.id).toMatch(/^we_[0-9a-z]{26}$/);
    expect(created.secret).toMatch(/^whsec_/);
    expect(created).toMatchObject({ object: 'webhook_endpoint', merchant_account: account, status: 'enabled', livemode: false, description: 'orders', event_types: ['payment.succeeded', 'refund.created'] });

    const got = await call('GET', `/webhook-endpoints/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.json.id).toBe(created.id);
    expect(got.json).not.toHaveProperty('secret');
    expect(got.text).not.toContain(created.secret);
    const list = await call('GET', `/webhook-endpoints?merchant_account=${account}`);
    expect(list.json.data.map((e: { id: string }) => e.id)).toEqual([created.id]);
    expect(list.text).not.toContain(created.secret);

    const [row] = await database.db.select().from(endpointSecrets).where(eq(endpointSecrets.endpointId, created.id));
    expect(row!.ciphertext.toString('latin1')).not.toContain(created.secret);
    expect(await signingSecretsFor(database.db, created.id, TEST_SECRETS_KEY, new Date())).toEqual([created.secret]);
    expect(logLines.join('')).toContain(created.id);
    expect(logLines.join('')).not.toContain(created.secret);
  });

  it.each([
    ['url', { url: 'not a url' }],
    ['url', { url: 'ftp://127.0.0.1/x' }],
    ['event_types', { event_types: [] }],
    ['event_types', { event_types: ['Payment Succeeded'] }],
    ['event_types', { event_types: 'payment.succeeded' }],
    ['merchant_account', { merchant_account: '' }],
    ['livemode', { livemode: 'yes' }],
  ])('§7 create with a bad %s is a 400 naming it', async (field, patch) => {
    const res = await call('POST', '/webhook-endpoints', { ...createBody(merchant()), ...patch });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('validation_failed');
    expect(res.json.error.message).toContain(field);
    expect(res.json.error.details.issues.some((i: { field: string }) => i.field.startsWith(field))).toBe(true);
  });

  it('M8 a subscription to a type not in the catalog is a 400 naming the field and the nearest type; nothing is created', async () => {
    const account = merchant();
    const res = await call('POST', '/webhook-endpoints', { ...createBody(account), event_types: ['payment.*', 'payment.suceeded'] });
    expect(res.status).toBe(400);
    expect(res.json.error.details.issues).toEqual([{ field: 'event_types.1', message: 'payment.suceeded is not an event type; did you mean payment.succeeded?' }]);
    expect((await call('GET', `/webhook-endpoints?merchant_account=${account}`)).json.data).toEqual([]);
    const pinned = await call('POST', '/webhook-endpoints', { ...createBody(account), event_types: ['payment.succeeded@1', 'refund.*'] });
    expect(pinned.status).toBe(201);
    expect(pinned.json.event_types).toEqual(['payment.succeeded@1', 'refund.*']);
    const catalog = await call('GET', '/event-types');
    expect(catalog.json.data.map((t: { type: string }) => t.type)).toContain('payment.succeeded');
    const one = await call('GET', '/event-types/refund.created');
    expect(one.json).toMatchObject({ type: 'refund.created', deprecated: { on: '2027-03-31', replaced_by: 'refund.succeeded' } });
    expect(one.json.versions[0].examples[0]).toMatchObject({ object: 'refund' });
    expect((await call('GET', '/event-types/refund.creatd')).status).toBe(404);
  });

  it('§7 a missing required field, an unknown field and malformed JSON are 400s', async () => {
    const { livemode: _omit, ...noLivemode } = createBody(merchant());
    const missing = await call('POST', '/webhook-endpoints', noLivemode);
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toContain('livemode');
    const unknown = await call('POST', '/webhook-endpoints', { ...createBody(merchant()), events: ['x'] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain('events');
    const malformed = await call('POST', '/webhook-endpoints', '{"merchant_account": ');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error).toBeDefined();
  });

  it('O15 with the strict profile, loopback/private/link-local/http URLs are refused naming url; a public https URL passes', async () => {
    const strict = createApp(deps({ profile: testProfile({ outbound: { allow_insecure_urls: false } }) }));
    for (const url of ['https://127.0.0.1/h', 'https://localhost/h', 'https://10.0.0.8/h', 'https://169.254.169.254/h', 'https://[::1]/h', 'https://[::ffff:192.168.1.1]/h', 'http://93.184.216.34/h']) {
      const res = await call('POST', '/webhook-endpoints', createBody(merchant(), { url }), auth, strict);
      expect(res.status, url).toBe(400);
      expect(res.json.error.message).toMatch(/^url: /);
      expect(res.json.error.details.issues[0].field).toBe('url');
    }
    const ok = await call('POST', '/webhook-endpoints', createBody(merchant(), { url: 'https://93.184.216.34/h' }), auth, strict);
    expect(ok.status).toBe(201);
    const patched = await call('PATCH', `/webhook-endpoints/${ok.json.id}`, { url: 'https://192.168.0.10/h' }, auth, strict);
    expect(patched.status).toBe(400);
    expect(patched.json.error.details.issues[0].field).toBe('url');
    expect((await call('GET', `/webhook-endpoints/${ok.json.id}`)).json.url).toBe('https://93.184.216.34/h');
  });

  it('§4 update, disable with a reason, enable (clears the failure streak), 404 for unknown ids', async () => {
    const created = await createEndpoint();
    const updated = await call('PATCH', `/webhook-endpoints/${created.id}`, { event_types: ['*', 'refund.created'], description: null });
    expect(updated.status).toBe(200);
    expect(updated.json.event_types).toEqual(['*']);
    expect(updated.json.description).toBeNull();
    const empty = await call('PATCH', `/webhook-endpoints/${created.id}`, {});
    expect(empty.status).toBe(400);

    await database.db.update(webhookEndpoints).set({ failingSince: new Date(Date.now() - 86_400_000) }).where(eq(webhookEndpoints.id, created.id));
    const noReason = await call('POST', `/webhook-endpoints/${created.id}/disable`, {});
    expect(noReason.status).toBe(400);
    expect(noReason.json.error.message).toContain('reason');
    const disabled = await call('POST', `/webhook-endpoints/${created.id}/disable`, { reason: 'merchant asked' });
    expect(disabled.json).toMatchObject({ status: 'disabled', disabled_reason: 'merchant asked' });
    expect(disabled.json.disabled_at).toBeTruthy();
    const enabled = await call('POST', `/webhook-endpoints/${created.id}/enable`);
    expect(enabled.json).toMatchObject({ status: 'enabled', disabled_reason: null, disabled_at: null });
    const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, created.id));
    expect(row!.failingSince).toBeNull();

    const unknown = newId('we');
    for (const [method, path, body] of [
      ['GET', `/webhook-endpoints/${unknown}`, undefined],
      ['PATCH', `/webhook-endpoints/${unknown}`, { description: 'x' }],
      ['DELETE', `/webhook-endpoints/${unknown}`, undefined],
      ['POST', `/webhook-endpoints/${unknown}/secret/rotate`, undefined],
      ['POST', `/webhook-endpoints/${unknown}/enable`, undefined],
    ] as const) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
    const badId = await call('GET', '/webhook-endpoints/not-an-id');
    expect(badId.status).toBe(400);
    expect(badId.json.error.message).toContain('id');
  });

  it('O9 rotate shows the new secret once; both secrets sign during the grace period, active first', async () => {
    const created = await createEndpoint();
    const rotated = await call('POST', `/webhook-endpoints/${created.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(created.secret);
    expect(await signingSecretsFor(database.db, created.id, TEST_SECRETS_KEY, new Date())).toEqual([rotated.json.secret, created.secret]);
    const grace = testProfile().outbound.secret_rotation_grace;
    expect(await signingSecretsFor(database.db, created.id, TEST_SECRETS_KEY, new Date(Date.now() + grace + 60_000))).toEqual([rotated.json.secret]);
    expect((await call('GET', `/webhook-endpoints/${created.id}`)).text).not.toContain(rotated.json.secret);
    expect(logLines.join('')).not.toContain(rotated.json.secret);
  });

  it('§4 delete is soft: 204, then 404 and gone from the list; deliveries stay readable; secrets destroyed', async () => {
    const account = merchant();
    const created = await createEndpoint(account);
    const { ids } = await seedDeliveries(created.id, account, ['FAILED']);
    expect((await call('DELETE', `/webhook-endpoints/${created.id}`)).status).toBe(204);
    expect((await call('GET', `/webhook-endpoints/${created.id}`)).status).toBe(404);
    expect((await call('DELETE', `/webhook-endpoints/${created.id}`)).status).toBe(404);
    expect((await call('GET', `/webhook-endpoints?merchant_account=${account}`)).json.data).toEqual([]);
    expect((await call('GET', `/webhook-deliveries/${ids[0]}`)).json.endpoint_id).toBe(created.id);
    expect(await database.db.select().from(endpointSecrets).where(eq(endpointSecrets.endpointId, created.id))).toHaveLength(0);
    const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, created.id));
    expect(row!.status).toBe('disabled'); // the dispatcher fans out to enabled endpoints only
    expect((await call('POST', `/webhook-deliveries/${ids[0]}/retry`)).status).toBe(409);
  });

  it('§4 list pagination is stable: every endpoint exactly once, in id order, across pages', async () => {
    const account = merchant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createEndpoint(account)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await call('GET', `/webhook-endpoints?merchant_account=${account}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.json.data.map((e: { id: string }) => e.id));
      cursor = res.json.next_cursor;
      expect(res.json.has_more).toBe(cursor !== null);
      if (pages === 0) ids.push((await createEndpoint(account)).id); // a write between pages
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].sort());
    expect(new Set(seen).size).toBe(seen.length);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=%25%25%25', 'cursor'],
    ]) {
      const res = await call('GET', `/webhook-endpoints?${query}`);
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain(field);
    }
  });
});

describe('webhook deliveries and events', () => {
  it('O11 list by endpoint and status, paginated by id without gaps or duplicates; get shows attempts', async () => {
    const account = merchant();
    const endpoint = await createEndpoint(account);
    const { ids } = await seedDeliveries(endpoint.id, account, ['FAILED', 'DELIVERED', 'FAILED', 'RETRYING', 'FAILED']);
    await database.db.insert(deliveryAttempts).values([
      { deliveryId: ids[0]!, attemptNumber: 1, startedAt: new Date('2026-01-01T00:00:00Z'), responseStatus: 503, latencyMs: 42, succeeded: false, errorKind: 'server_error', responseExcerpt: 'busy' },
      { deliveryId: ids[0]!, attemptNumber: 2, startedAt: new Date('2026-01-01T00:01:00Z'), responseStatus: null, latencyMs: 10_001, succeeded: false, errorKind: 'timeout' },
    ]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/webhook-deliveries?endpoint_id=${endpoint.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.json.data.map((d: { id: string }) => d.id));
      cursor = res.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].sort());

    const failed = await call('GET', `/webhook-deliveries?endpoint_id=${endpoint.id}&status=FAILED`);
    expect(failed.json.data.map((d: { id: string }) => d.id)).toEqual([ids[0], ids[2], ids[4]].sort());
    expect(failed.json.data.every((d: { status: string }) => d.status === 'FAILED')).toBe(true);

    const detail = await call('GET', `/webhook-deliveries/${ids[0]}`);
    expect(detail.json).toMatchObject({ id: ids[0], object: 'webhook_delivery', endpoint_id: endpoint.id, status: 'FAILED', attempt_count: 6 });
    expect(detail.json.attempts).toEqual([
      expect.objectContaining({ attempt_number: 1, response_status: 503, latency_ms: 42, error_kind: 'server_error', response_excerpt: 'busy', started_at: '2026-01-01T00:00:00.000Z' }),
      expect.objectContaining({ attempt_number: 2, response_status: null, latency_ms: 10_001, error_kind: 'timeout' }),
    ]);
    expect((await call('GET', `/webhook-deliveries/${newId('whd')}`)).status).toBe(404);
    const badStatus = await call('GET', '/webhook-deliveries?status=LOST');
    expect(badStatus.status).toBe(400);
    expect(badStatus.json.error.message).toContain('status');
  });

  it('O11 filter by event; GET /events/{id} shows the body, type, created, livemode and its deliveries', async () => {
    const account = merchant();
    const endpoint = await createEndpoint(account);
    const { eventId, ids } = await seedDeliveries(endpoint.id, account, ['PENDING']);
    const byEvent = await call('GET', `/webhook-deliveries?event_id=${eventId}`);
    expect(byEvent.json.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    const event = await call('GET', `/events/${eventId}`);
    expect(event.status).toBe(200);
    expect(event.json).toMatchObject({ id: eventId, object: 'event', type: 'payment.succeeded', created: 1_780_000_000, livemode: false, merchant_account: account });
    expect(event.json.body).toMatchObject({ id: eventId, data: { object: { amount: 100 } } });
    expect(event.json.deliveries.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    expect((await call('GET', '/events/evt_doesnotexist')).status).toBe(404);
    expect((await call('GET', '/events/nope')).status).toBe(400);
  });

  it('O12 retry of a DELIVERED delivery is a 409 conflict; nothing is started', async () => {
    const account = merchant();
    const endpoint = await createEndpoint(account);
    const { ids } = await seedDeliveries(endpoint.id, account, ['DELIVERED']);
    const res = await call('POST', `/webhook-deliveries/${ids[0]}/retry`, { reason: 'merchant asked' });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('conflict');
    await expect(temporal.client.workflow.getHandle(ids[0]!).describe()).rejects.toThrow();
    expect((await call('POST', `/webhook-deliveries/${newId('whd')}/retry`)).status).toBe(404);
  });

  it('O12 retry of a FAILED delivery puts it back to PENDING and a delivery workflow with id = delivery id exists', async () => {
    const account = merchant();
    const endpoint = await createEndpoint(account);
    const { ids } = await seedDeliveries(endpoint.id, account, ['FAILED']);
    const id = ids[0]!;
    startedWorkflows.push(id);
    const res = await call('POST', `/webhook-deliveries/${id}/retry`, { reason: 'merchant fixed their TLS' });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ id, status: 'PENDING', failed_at: null });
    const [row] = await database.db.select().from(deliveries).where(eq(deliveries.id, id));
    expect(row!.status).toBe('PENDING');
    const description = await temporal.client.workflow.getHandle(id).describe();
    expect(description.type).toBe(DELIVERY_WORKFLOW);
    expect(description.taskQueue).toBe(taskQueues.delivery);
    expect(description.status.name).toBe('RUNNING');
    // A second retry while that run is open signals it instead of starting another.
    const again = await call('POST', `/webhook-deliveries/${id}/retry`);
    expect(again.status).toBe(202);
    expect((await temporal.client.workflow.getHandle(id).describe()).runId).toBe(description.runId);
  });

  it('O13 recover re-queues only the FAILED deliveries created since the given time; disabled endpoint is 409', async () => {
    const account = merchant();
    const endpoint = await createEndpoint(account);
    const { ids: old } = await seedDeliveries(endpoint.id, account, ['FAILED']);
    await database.db.update(deliveries).set({ createdAt: new Date(Date.now() - 3 * 86_400_000) }).where(eq(deliveries.id, old[0]!));
    const { ids } = await seedDeliveries(endpoint.id, account, ['FAILED', 'DELIVERED', 'FAILED']);
    startedWorkflows.push(ids[0]!, ids[2]!);

    const badSince = await call('POST', `/webhook-endpoints/${endpoint.id}/recover`, { since: 'yesterday' });
    expect(badSince.status).toBe(400);
    expect(badSince.json.error.message).toContain('since');

    await call('POST', `/webhook-endpoints/${endpoint.id}/disable`, { reason: 'outage' });
    const since = new Date(Date.now() - 86_400_000).toISOString();
    const refused = await call('POST', `/webhook-endpoints/${endpoint.id}/recover`, { since });
    expect(refused.status).toBe(409);
    await call('POST', `/webhook-endpoints/${endpoint.id}/enable`);

    const res = await call('POST', `/webhook-endpoints/${endpoint.id}/recover`, { since });
    expect(res.status).toBe(202);
    expect(res.json.requeued).toBe(2);
    expect([...res.json.delivery_ids].sort()).toEqual([ids[0], ids[2]].sort());
    const rows = await database.db.select().from(deliveries).where(eq(deliveries.endpointId, endpoint.id));
    const status = Object.fromEntries(rows.map((r) => [r.id, r.status]));
    expect(status).toEqual({ [old[0]!]: 'FAILED', [ids[0]!]: 'PENDING', [ids[1]!]: 'DELIVERED', [ids[2]!]: 'PENDING' });
    for (const id of [ids[0]!, ids[2]!]) expect((await temporal.client.workflow.getHandle(id).describe()).status.name).toBe('RUNNING');
    expect((await call('POST', `/webhook-endpoints/${newId('we')}/recover`, { since })).status).toBe(404);
  });
});

describe('apipay CLI against the real admin app', () => {
  it('§4 endpoints create → get → deliveries list through the CLI, with the admin app as its server', async () => {
    let out = '';
    let err = '';
    const io = {
      env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      fetch: ((input: string | URL, init?: RequestInit) => app.request(String(input), init)) as typeof fetch,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
    };
    const account = merchant();
    expect(await runCli(['endpoints', 'create', '--merchant', account, '--url', 'http://127.0.0.1:4999/h', '--events', 'payment.succeeded'], io)).toBe(0);
    const created = JSON.parse(out);
    expect(created.secret).toMatch(/^whsec_/);
    out = '';
    expect(await runCli(['endpoints', 'get', created.id], io)).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ id: created.id, merchant_account: account });
    expect(out).not.toContain(created.secret);
    out = '';
    expect(await runCli(['deliveries', 'list', '--endpoint', created.id], io)).toBe(0);
    expect(JSON.parse(out)).toEqual({ data: [], has_more: false, next_cursor: null });
    expect(await runCli(['endpoints', 'get', newId('we')], io)).toBe(1);
    expect(JSON.parse(err).error.code).toBe('not_found');
  });
});
