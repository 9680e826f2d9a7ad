// A7 on the real PostgreSQL: a token bucket per API key on the admin API and per provider on the ingress; past it
// 429 with Retry-After in the one error shape; one key's or one provider's flood leaves the others untouched.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEMPORAL_ADDRESS, TEST_DATABASE_URL } from '../helpers/env.js';
import { hmacPayload, hmacRequest, inboundTestProfile, stripeEvent, stripeRequest, uniqueReference } from '../helpers/inbound.js';
import { testProfile } from '../helpers/profile.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
const temporal = new Client({ connection: Connection.lazy({ address: TEMPORAL_ADDRESS }) });

beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
});
afterAll(async () => {
  await database?.close();
});

describe('A7 admin API: per key', () => {
  it('A7 past its burst a key gets 429 with Retry-After in the error shape; another key is still served', async () => {
    const app = testApp({
      db: database.db,
      temporal,
      taskQueues: uniqueTaskQueues('rate-admin'),
      profile: testProfile({ admin: { rate_limit: { per_second: 0.5, burst: 3 } } }),
    });
    // Keys are made with the bootstrap token, which has a bucket of its own.
    const flooder = await createKey(app, 'viewer', undefined, 'flooder');
    const bystander = await createKey(app, 'viewer', undefined, 'bystander');
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await callAs(app, flooder.token, 'GET', '/webhook-endpoints?limit=1')).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    const limited = await callAs(app, flooder.token, 'GET', '/webhook-endpoints?limit=1');
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(limited.json.error.requestId).toBeTruthy();
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(2);
    expect((await callAs(app, bystander.token, 'GET', '/webhook-endpoints?limit=1')).status).toBe(200);
  });
});

describe('A7 ingress: per provider', () => {
  it('A7 a flood from one provider is refused with 429 past its bucket while another provider is acknowledged in full', async () => {
    const { profile, stripe, hmac } = inboundTestProfile('rate', { inbound: { rate_limit: { per_second: 1, burst: 5 } } });
    // The hmac provider has its own, larger bucket (a per-provider override).
    profile.inbound.providers[hmac]!.rate_limit = { per_second: 1, burst: 20 };
    const app = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('rate-ingress'), profile, ingress: { starter: null } });
    const flood = Array.from({ length: 40 }, () => stripeEvent()).map((e) => app.request(`/webhooks/${stripe}`, stripeRequest(e.body)));
    const others = Array.from({ length: 10 }, () => hmacPayload({ type: 'payment.succeeded', reference: uniqueReference(), amountMinor: 100, currency: 'EUR' }));
    const calm = others.map((e) => app.request(`/webhooks/${hmac}`, hmacRequest(e.body)));
    const [flooded, served] = await Promise.all([Promise.all(flood), Promise.all(calm)]);
    expect(flooded.filter((r) => r.status === 200)).toHaveLength(5);
    const refused = flooded.filter((r) => r.status === 429);
    expect(refused).toHaveLength(35);
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await refused[0]!.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    expect(served.map((r) => r.status)).toEqual(Array(10).fill(200));
  });
});
