// A17 on the real PostgreSQL: guessing is not free and junk cannot spend a provider's budget (issue 23: 150 wrong
// bearer tokens were 150 × 401; console sign-in had no limiter; unsigned junk exhausted a provider's token bucket so
// a real signed webhook got 429).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { inboundTestProfile, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
const temporal = lazyTemporal();
const wrongKey = (id: string) => `${id}_${'x'.repeat(43)}`;

beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
});
afterAll(async () => {
  await database?.close();
});

const statusesOf = async (requests: Array<() => { status: number } | Promise<{ status: number }>>) => {
  const out: number[] = [];
  for (const r of requests) out.push((await r()).status);
  return out;
};

describe('A17 failed credentials on the admin API', () => {
  it('A17 issue 23: 150 wrong bearer tokens from one address hit 429 with Retry-After; a right key is still served, from there too', async () => {
    const app = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('throttle-admin') });
    const viewer = await createKey(app, 'viewer', undefined, 'throttle-viewer');
    const guess = (i: number) => () =>
      app.request(
        '/admin/v1/webhook-endpoints',
        { headers: { authorization: `Bearer guess-${i}` } },
        { remoteAddress: '203.0.113.7' },
      );
    const statuses = await statusesOf(Array.from({ length: 150 }, (_, i) => guess(i)));
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(130).fill(429));
    const refused = await guess(999)();
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    // A23 (issue 30): a right key is never refused for its address's failures (it was 429 here until then).
    const right = (address: string) =>
      app.request(
        '/admin/v1/webhook-endpoints',
        { headers: { authorization: `Bearer ${viewer.token}` } },
        { remoteAddress: address },
      );
    expect((await right('203.0.113.7')).status).toBe(200);
    expect((await right('198.51.100.9')).status).toBe(200);
  });

  it('A17 wrong secrets for one key id from many addresses hit 429 past the per-key budget; the right secret still works', async () => {
    const app = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('throttle-key') });
    const target = await createKey(app, 'admin', undefined, 'throttle-target');
    const statuses = await statusesOf(
      Array.from(
        { length: 15 },
        (_, i) => () =>
          app.request(
            '/admin/v1/api-keys',
            { headers: { authorization: `Bearer ${wrongKey(target.id)}` } },
            { remoteAddress: `192.0.2.${i + 1}` },
          ),
      ),
    );
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(5).fill(429));
    expect((await callAs(app, target.token, 'GET', '/api-keys')).status).toBe(200); // no lock-out of the key's owner
  });

  it('A17 console sign-in: wrong tokens past the budget answer 429 with Retry-After', async () => {
    const app = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('throttle-console') });
    const browser = pageClient(app, { address: '203.0.113.50' });
    await browser.get('/console/sign-in');
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await browser.post('/console/sign-in', { token: `wrong-${i}` })).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses.slice(20)).toEqual(Array(5).fill(429));
    const last = await browser.post('/console/sign-in', { token: 'wrong' });
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

/** The API app with `profile` and no workflow starter (the ingress acknowledges and stores; nothing is started). */
const ingressApp = (label: string, profile: Parameters<typeof testApp>[0]['profile']) =>
  testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues(label), profile, ingress: { starter: null } });

describe('A17 the ingress verifies before it spends a provider’s budget', () => {
  it('A17 issue 23: unsigned junk does not exhaust the provider’s bucket: a real signed webhook after it is acknowledged', async () => {
    const { profile, stripe } = inboundTestProfile('throttle', { inbound: { rate_limit: { per_second: 0.1, burst: 5 } } });
    const app = ingressApp('throttle-ingress', profile);
    const junk = (i: number) =>
      app.request(
        `/webhooks/${stripe}`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"junk":true}' },
        { remoteAddress: `192.0.2.${i % 40}` },
      );
    const junkStatuses = await statusesOf(Array.from({ length: 40 }, (_, i) => () => junk(i)));
    expect(junkStatuses).toEqual(Array(40).fill(401));
    const real = await app.request(`/webhooks/${stripe}`, stripeRequest(stripeEvent().body));
    expect(real.status, await real.text()).toBe(200);
  });

  it('A17 one address sending requests that fail verification is refused with 429 past its own budget; others are not', async () => {
    const { profile, stripe } = inboundTestProfile('throttle-addr');
    profile.inbound.unverified_per_address = { per_second: 0.1, burst: 10 };
    const app = ingressApp('throttle-addr', profile);
    const junk = (address: string) => () =>
      app.request(
        `/webhooks/${stripe}`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
        { remoteAddress: address },
      );
    const statuses = await statusesOf(Array.from({ length: 15 }, () => junk('203.0.113.99')));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(5).fill(429));
    expect((await junk('203.0.113.100')()).status).toBe(401);
    const signed = await app.request(`/webhooks/${stripe}`, stripeRequest(stripeEvent().body), {
      remoteAddress: '203.0.113.101',
    });
    expect(signed.status).toBe(200);
  });
});
