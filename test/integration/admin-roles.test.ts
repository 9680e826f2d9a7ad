// A1, A20 on the real PostgreSQL and Temporal dev server: every admin operation with every role, built from the
// route list of the OpenAPI document and the one table of expected outcomes, test/fixtures/access-matrix.ts (a new
// route without a role rule, or without a row there, fails). Allowed →
// its 2xx (or its normal 4xx for a deliberately bad body), not allowed → 403, another merchant's object → 404.
// A26: the same table for people of an identity provider (access tokens of a local issuer, groups → roles by the
// profile, approvers with a fresh second factor).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, StaffRole } from '../../src/access/roles.js';
import type { Database } from '../../src/db/client.js';
import { deliveries, deliveryAttempts, events, reconciliations } from '../../src/db/schema/index.js';
import { newId, reconciliationWorkflowId } from '../../src/shared/ids.js';
import { ADMIN_ROUTES, type AdminRow } from '../fixtures/access-matrix.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/idp.js';
import { testProfile } from '../helpers/profile.js';
import { testApp } from '../helpers/app.js';
import { insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let app: ReturnType<typeof testApp>;
let idpApp: ReturnType<typeof testApp>;
let issuer: LocalIssuer;
const started = new Set<string>();
const mine = uniqueMerchant('roles-a');
const theirs = uniqueMerchant('roles-b');
const provider = `roles-${randomUUID().slice(0, 8)}`;
const callers = {} as Record<'viewer' | 'operator' | 'admin' | 'merchant', Caller>;

/** Fresh objects of one account per call, so destructive operations never share a target. */
async function objects(account: string) {
  const endpoint = await insertEndpoint(database.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook' });
  const eventId = `evt_${randomUUID().replaceAll('-', '')}`;
  await database.db.insert(events).values({ eventPublicId: eventId, merchantAccount: account, type: 'payment.succeeded', livemode: false, createdUnix: 1_780_000_000, body: Buffer.from('{"secret_field":"body-bytes"}') });
  const deliveryId = newId('whd');
  await database.db.insert(deliveries).values({ id: deliveryId, eventPublicId: eventId, endpointId: endpoint.id, merchantAccount: account, status: 'FAILED', attemptCount: 1, failedAt: new Date() });
  await database.db.insert(deliveryAttempts).values({ deliveryId, attemptNumber: 1, startedAt: new Date(), responseStatus: 500, latencyMs: 3, succeeded: false, errorKind: 'server_error', responseExcerpt: 'merchant-said-this' });
  const providerEventId = `evt_${randomUUID().slice(0, 12)}`;
  const reconciliationId = reconciliationWorkflowId(provider, providerEventId);
  await database.db.insert(reconciliations).values({ id: reconciliationId, provider, providerEventId, eventType: 'payment.succeeded', paymentReference: 'pi_x', amountMinor: 100n, currency: 'EUR', effectiveAt: new Date(), state: 'manual_review', acknowledgedAt: new Date() });
  const key = await createKey(app, 'viewer', undefined, `victim-${account}`, undefined, 'service');
  return { account, provider, endpointId: endpoint.id, eventId, deliveryId, reconciliationId, keyId: key.id };
}

type Row = AdminRow;
const TABLE = ADMIN_ROUTES;

const RANK: Record<StaffRole, number> = { viewer: 0, operator: 1, admin: 2 };
const expectedAllowed = (row: Row, role: Role) => (role === 'merchant' ? row.merchant : RANK[role] >= RANK[row.role]);

let routes: Array<{ key: string; method: string; operation: Record<string, unknown> }> = [];

const world = useWorld({ label: 'admin-roles' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('admin-roles') });
  for (const role of ['viewer', 'operator', 'admin'] as const) callers[role] = await createKey(app, role);
  callers.merchant = await createKey(app, 'merchant', mine);
  issuer = await startLocalIssuer();
  idpApp = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('admin-roles-idp'), profile: testProfile({ idp: issuer.profile }) });
  const doc = (await callAs(app, undefined, 'GET', '/openapi.json')).json as { paths: Record<string, Record<string, Record<string, unknown>>> };
  routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), operation })));
});
afterAll(async () => {
  await issuer?.close();
  for (const id of started) await temporal.client.workflow.getHandle(id).terminate('test cleanup').catch(() => undefined);
});

describe('A1 every admin operation has a role rule, stated in the OpenAPI document', () => {
  it('A1 each route of the document declares x-required-role and has a row in this table (and the table has no stale rows)', () => {
    expect(routes.length).toBeGreaterThan(15);
    for (const { key, operation } of routes) {
      const row = TABLE[key];
      expect(row, `${key}: add a row to ADMIN_ROUTES in test/fixtures/access-matrix.ts`).toBeDefined();
      expect(operation['x-required-role'], key).toBe(row!.role);
      expect(operation['x-merchant-access'], key).toBe(row!.merchant ? 'own' : 'none');
      expect(String(operation.description), key).toContain(`Required role: ${row!.role}`);
      expect(Object.keys(operation.responses as object), key).toEqual(expect.arrayContaining(['401', '403', '429']));
    }
    expect(Object.keys(TABLE).sort()).toEqual(routes.map((r) => r.key).sort());
  });
});

/** Every operation as `role` (credential from `token`): allowed → the row's status, otherwise 403. */
async function everyOperation(on: ReturnType<typeof testApp>, role: Role, token: () => Promise<string>, label: string) {
  for (const { key, method } of routes) {
    const row = TABLE[key]!;
    const o = await objects(mine);
    const { path, body } = row.request(o);
    const res = await callAs(on, await token(), method, path, body);
    if (key === 'POST /webhook-deliveries/{id}/retry') started.add(o.deliveryId);
    if (key === 'POST /webhook-endpoints/{id}/test' && res.json?.delivery_id) started.add(res.json.delivery_id);
    if (expectedAllowed(row, role)) {
      expect(res.status, `${label} ${key}: ${res.text}`).toBe(row.ok);
    } else {
      expect(res.status, `${label} ${key}: ${res.text}`).toBe(403);
      expect(res.json.error.code).toBe('forbidden');
    }
  }
}

describe.each(['viewer', 'operator', 'admin', 'merchant'] as const)('A1 role %s', (role) => {
  it(`A1 ${role}: every allowed operation answers its status, every other one 403`, async () => {
    await everyOperation(app, role, async () => callers[role].token, role);
  });
});

describe.each([
  ['viewer', 'viewer'],
  ['operator', 'operator'],
  ['finance-approver', 'operator'],
  ['admin', 'admin'],
  ['merchant', 'merchant'],
] as const)('A26 IdP group %s', (group, role) => {
  it(`A26 a person in ${group} (role ${role}): every allowed operation answers its status, every other one 403`, async () => {
    const sub = `${group}-${randomUUID()}`;
    const claims = { groups: [group], ...(role === 'merchant' ? { merchant_account: mine } : {}) };
    await everyOperation(idpApp, role, () => issuer.mint(sub, claims), `IdP ${group}`);
  });
});

describe('A1 merchant keys: another merchant’s objects do not exist', () => {
  it('A1 every merchant operation on another account’s id answers 404, and lists never show it', async () => {
    for (const [key, row] of Object.entries(TABLE).filter(([, r]) => r.merchant)) {
      const other = await objects(theirs);
      const { path, body } = row.request(other);
      const method = key.split(' ')[0]!;
      const res = await callAs(app, callers.merchant.token, method, path, body);
      if (row.owned) {
        expect(res.status, `${key}: ${res.text}`).toBe(404);
        expect(res.json.error.code).toBe('not_found');
      } else {
        expect(res.status, key).toBe(200);
        expect(res.text, key).not.toContain(row.lists!(other));
      }
    }
    const filtered = await callAs(app, callers.merchant.token, 'GET', `/webhook-endpoints?merchant_account=${theirs}`);
    expect(filtered.json.data).toEqual([]);
    const own = await callAs(app, callers.merchant.token, 'GET', `/webhook-endpoints?limit=100`);
    expect(own.json.data.length).toBeGreaterThan(0);
    expect(own.json.data.every((e: { merchant_account: string }) => e.merchant_account === mine)).toBe(true);
  });
});

describe('A1 raw bodies', () => {
  it('A1 a viewer sees events and attempts without the body and the response excerpt; an operator and the merchant see them', async () => {
    const o = await objects(mine);
    const asViewer = await callAs(app, callers.viewer.token, 'GET', `/events/${o.eventId}`);
    expect(asViewer.json).not.toHaveProperty('body');
    expect(asViewer.text).not.toContain('body-bytes');
    const attemptsViewer = await callAs(app, callers.viewer.token, 'GET', `/webhook-deliveries/${o.deliveryId}`);
    expect(attemptsViewer.json.attempts[0]).not.toHaveProperty('response_excerpt');
    expect(attemptsViewer.text).not.toContain('merchant-said-this');
    for (const role of ['operator', 'merchant'] as const) {
      expect((await callAs(app, callers[role].token, 'GET', `/events/${o.eventId}`)).json.body).toEqual({ secret_field: 'body-bytes' });
      expect((await callAs(app, callers[role].token, 'GET', `/webhook-deliveries/${o.deliveryId}`)).json.attempts[0].response_excerpt).toBe('merchant-said-this');
    }
  });
});
