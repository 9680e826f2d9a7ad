// R1/R10 on the admin API: text PostgreSQL refuses (U+0000, lone surrogates) in a query string, a path or a JSON
// body is a 400 naming where it is, never a 5xx, and nothing is written. The two cases are the counterexamples
// `npm run fuzz -- --runs 10000` found (seed 8011) before the storable-input middleware existed.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let app: ReturnType<typeof testApp>;
const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

const world = useWorld({ label: 'admin-storable-input' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('storable') });
});
afterAll(async () => {});

const get = (path: string) => app.request(`/admin/v1${path}`, { headers: auth });
const post = (path: string, body: unknown) =>
  app.request(`/admin/v1${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
/** An endpoint create of a fresh merchant whose description is `description`: the account and the answer. */
async function createWithDescription(description: string) {
  const merchantAccount = `acct_storable_${randomUUID().slice(0, 8)}`;
  const response = await post('/webhook-endpoints', {
    merchant_account: merchantAccount,
    url: 'https://merchant.example.com/hooks',
    event_types: ['*'],
    livemode: false,
    description,
  });
  return { merchantAccount, response };
}

describe('R21 admin times out of the range PostgreSQL and ISO 8601 hold: 400 naming the field, never a 5xx', () => {
  const cursor = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  it.each([
    ['a list window from year 0000', '/reconciliations?from=0000-01-01', 'from'],
    ['a list window to year 0000 as a date-time', '/webhook-deliveries?to=0000-06-01T00:00:00Z', 'to'],
    ['a reconciliations cursor past 9999', `/reconciliations?cursor=${cursor('999999999999999:rec_x')}`, 'cursor'],
    ['an export window from year 0000', '/exports/ledger.csv?from=0000-01-01T00:00:00Z', 'from'],
    ['a resolutions export window to year 0000', '/exports/operator-resolutions.csv?to=0000-12-31T23:00:00Z', 'to'],
    ['a ledger check from year 0000', '/ledger/check?from=0000-01-01T00:00:00Z', 'from'],
  ])('R21 %s: 400 naming it', async (_name, path, field) => {
    const response = await get(path);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.message).toContain(field);
  });

  it('R21 a recover since year 0000: 400 naming since', async () => {
    const response = await post(`/webhook-endpoints/we_${randomUUID().replace(/-/g, '')}/recover`, {
      since: '0000-01-01T00:00:00Z',
      reason: 'r21',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.message).toContain('since');
  });
});

describe('R1 admin input PostgreSQL would refuse', () => {
  it.each([
    [
      'a NUL in a list filter',
      `/webhook-endpoints?merchant_account=${encodeURIComponent('acct_i\u000059')}`,
      'query.merchant_account',
    ],
    ['a NUL in a deliveries filter', `/webhook-deliveries?endpoint_id=${encodeURIComponent('we_\u0000')}`, 'query.endpoint_id'],
    ['a NUL in a path id', `/webhook-endpoints/${encodeURIComponent('we_\u0000')}`, 'path'],
  ])('R1 %s: 400 naming it', async (_name, path, field) => {
    const response = await get(path);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.message).toContain(field);
    expect(body.error.message).not.toContain('\u0000');
  });

  it('R1 an endpoint create whose description has a NUL: 400 and no row', async () => {
    const { merchantAccount, response } = await createWithDescription('acct_\u0000 .B@');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /^description: must not contain U\+0000/,
    );
    expect(
      await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.merchantAccount, merchantAccount)),
    ).toEqual([]);
  });

  it('R1 a lone surrogate in a JSON body: 400, no row', async () => {
    const merchantAccount = `acct_storable_${randomUUID().slice(0, 8)}`;
    const body = `{"merchant_account":"${merchantAccount}","url":"https://merchant.example.com/hooks","event_types":["*"],"livemode":false,"description":"x\\ud800"}`;
    const response = await app.request('/admin/v1/webhook-endpoints', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /^description: must not contain a lone UTF-16 surrogate/,
    );
    expect(
      await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.merchantAccount, merchantAccount)),
    ).toEqual([]);
  });

  it('R1 the same create without the NUL is accepted (the guard refuses only what cannot be stored)', async () => {
    const { response } = await createWithDescription('acct_ .B@ ︷ é');
    expect(response.status, await response.clone().text()).toBe(201);
  });
});
