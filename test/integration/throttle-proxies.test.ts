// A23 on the real PostgreSQL, through the real API app (issue 30: after 30 wrong bearer tokens from 127.0.0.1 a valid
// operator key from the same address got 429; behind a proxy every client shared the proxy's address, so one
// anonymous client locked everyone out; the counts were per process; cookies were never Secure and portal links
// were http:// behind a TLS proxy). A credential or signature that verifies is never refused for its address's
// failures; X-Forwarded-For is read from the right through the profile's trusted proxies only; the counts live in
// PostgreSQL, shared by every replica.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL } from '../helpers/env.js';
import { inboundTestProfile, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { testProfile } from '../helpers/profile.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
const temporal = lazyTemporal();
const PROXY = '10.20.0.7';
const behindProxy = () => testProfile({ http: { trusted_proxies: ['10.20.0.0/16', 'fd00:20::/64'] } });

beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 8 });
});
afterAll(async () => {
  await database?.close();
});

type App = ReturnType<typeof testApp>;
const appWith = (label: string, extra: Partial<Parameters<typeof testApp>[0]> = {}) =>
  testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues(label), ...extra });

/** One admin API call with a bearer token, from `address` (the socket peer), with extra headers (X-Forwarded-For). */
const bearer = (app: App, token: string, address: string, headers: Record<string, string> = {}) =>
  app.request(
    '/admin/v1/webhook-endpoints?limit=1',
    { headers: { authorization: `Bearer ${token}`, ...headers } },
    { remoteAddress: address },
  );

async function statuses(n: number, send: (i: number) => Response | Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send(i)).status);
  return out;
}

describe('A23 a credential that verifies is never refused for its address', () => {
  it('A23 issue 30: 30 wrong bearer tokens from 127.0.0.1, then a valid operator key from 127.0.0.1 → 200', async () => {
    const app = appWith('a23-admin');
    const operator = await createKey(app, 'operator', undefined, 'a23-operator');
    const wrong = await statuses(30, (i) => bearer(app, `guess-${i}`, '127.0.0.1'));
    expect(wrong.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(wrong.slice(20)).toEqual(Array(10).fill(429));
    expect((await bearer(app, operator.token, '127.0.0.1')).status).toBe(200);
    // The address is still throttled for what does not verify.
    expect((await bearer(app, 'guess-again', '127.0.0.1')).status).toBe(429);
  });

  it('A23 the bootstrap ADMIN_TOKEN (chosen by a person, maybe weak) is not let through a throttled address', async () => {
    const app = appWith('a23-bootstrap');
    await statuses(21, (i) => bearer(app, `guess-${i}`, '192.0.2.99'));
    expect((await bearer(app, TEST_ADMIN_TOKEN, '192.0.2.99')).status).toBe(429);
    expect((await bearer(app, TEST_ADMIN_TOKEN, '192.0.2.100')).status).toBe(200);
  });

  it('A23 console sign-in: past the address budget a right key from that address still signs in', async () => {
    const app = appWith('a23-console');
    const operator = await createKey(app, 'operator', undefined, 'a23-console-operator');
    const browser = pageClient(app, { address: '203.0.113.23' });
    await browser.get('/console/sign-in');
    const wrong: number[] = [];
    for (let i = 0; i < 22; i++) wrong.push((await browser.post('/console/sign-in', { token: `wrong-${i}` })).status);
    expect(wrong.slice(20)).toEqual([429, 429]);
    const right = await browser.post('/console/sign-in', { token: operator.token });
    expect(right.status, right.text).toBe(303);
    expect((await browser.get('/console/deliveries')).status).toBe(200);
  });

  it('A23 ingress: past the address budget for bad signatures, a signed webhook from that address is acknowledged', async () => {
    const { profile, stripe } = inboundTestProfile('a23-ingress');
    profile.inbound.unverified_per_address = { per_second: 0.1, burst: 5 };
    const app = appWith('a23-ingress', { profile, ingress: { starter: null } });
    const junk = await statuses(8, () =>
      app.request(
        `/webhooks/${stripe}`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' },
        { remoteAddress: '198.51.100.23' },
      ),
    );
    expect(junk).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const signed = await app.request(`/webhooks/${stripe}`, stripeRequest(stripeEvent().body), {
      remoteAddress: '198.51.100.23',
    });
    expect(signed.status, await signed.text()).toBe(200);
  });

  it('A23 an IPv6 client counts per /64: guesses from many addresses of one /64 share one budget, another /64 is untouched', async () => {
    const app = appWith('a23-ipv6');
    const wrong = await statuses(22, (i) => bearer(app, `guess-${i}`, `2001:db8:23:1::${(i + 1).toString(16)}`));
    expect(wrong.slice(20)).toEqual([429, 429]);
    expect((await bearer(app, 'guess', '2001:db8:23:1:ffff::1')).status).toBe(429);
    expect((await bearer(app, 'guess', '2001:db8:23:2::1')).status).toBe(401);
  });
});

describe('A23 the counts are shared by every replica', () => {
  it('A23 two API apps on one database share the address budget: 10 failures on each, the next on either is 429', async () => {
    const shared = `replicas-${randomUUID()}`;
    const one = appWith('a23-replica-1', { throttleNamespace: shared });
    const two = appWith('a23-replica-2', { throttleNamespace: shared });
    const first = await statuses(10, (i) => bearer(one, `guess-a-${i}`, '192.0.2.23'));
    const second = await statuses(10, (i) => bearer(two, `guess-b-${i}`, '192.0.2.23'));
    expect([...first, ...second]).toEqual(Array(20).fill(401));
    expect((await bearer(one, 'guess-c', '192.0.2.23')).status).toBe(429);
    expect((await bearer(two, 'guess-d', '192.0.2.23')).status).toBe(429);
  });
});

describe('A23 the shared count under concurrency', () => {
  it('A23 30 failures at once over two replicas: exactly the budget of 20 is answered 401, the rest 429 (one atomic upsert each)', async () => {
    const shared = `concurrent-${randomUUID()}`;
    const profile = () => testProfile({ admin: { failed_auth_per_address: { per_second: 0.001, burst: 20 } } });
    const apps = [
      appWith('a23-race-1', { throttleNamespace: shared, profile: profile() }),
      appWith('a23-race-2', { throttleNamespace: shared, profile: profile() }),
    ];
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => bearer(apps[i % 2]!, `guess-${i}`, '192.0.2.77')));
    const counts = all.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 401: 20, 429: 10 });
  });
});

describe('A23 X-Forwarded-For through trusted proxies only', () => {
  it('A23 behind the trusted proxy each client has its own budget: one anonymous client does not lock out the others', async () => {
    const app = appWith('a23-proxy', { profile: behindProxy() });
    const wrong = await statuses(22, (i) => bearer(app, `guess-${i}`, PROXY, { 'x-forwarded-for': '203.0.113.41' }));
    expect(wrong.slice(20)).toEqual([429, 429]);
    // Another client behind the same proxy: its own budget (401, not 429), and its right key works.
    expect((await bearer(app, 'typo', PROXY, { 'x-forwarded-for': '198.51.100.42' })).status).toBe(401);
    const viewer = await createKey(app, 'viewer', undefined, 'a23-proxy-viewer');
    expect((await bearer(app, viewer.token, PROXY, { 'x-forwarded-for': '198.51.100.42' })).status).toBe(200);
    // A proxy on IPv6 too (the fd00:20::/64 hop is trusted).
    expect((await bearer(app, 'typo', 'fd00:20::5', { 'x-forwarded-for': '203.0.113.41' })).status).toBe(429);
  });

  it('A23 an untrusted client cannot evade its budget with X-Forwarded-For', async () => {
    const app = appWith('a23-evade', { profile: behindProxy() });
    const wrong = await statuses(22, (i) =>
      bearer(app, `guess-${i}`, '203.0.113.51', { 'x-forwarded-for': `198.51.100.${i + 1}` }),
    );
    expect(wrong.slice(20)).toEqual([429, 429]);
    // Through the proxy, a spoofed left-most entry does not make it someone else either.
    expect((await bearer(app, 'guess', PROXY, { 'x-forwarded-for': '198.51.100.200, 203.0.113.51' })).status).toBe(429);
  });

  it('A23 an untrusted client cannot frame another address with X-Forwarded-For', async () => {
    const app = appWith('a23-frame', { profile: behindProxy() });
    const victim = '198.51.100.61';
    await statuses(25, (i) => bearer(app, `guess-${i}`, '203.0.113.60', { 'x-forwarded-for': victim }));
    // Through the proxy, a left-most entry naming the victim counts against the sender the proxy saw.
    await statuses(25, (i) => bearer(app, `guess-${i}`, PROXY, { 'x-forwarded-for': `${victim}, 203.0.113.62` }));
    expect((await bearer(app, 'typo', PROXY, { 'x-forwarded-for': victim })).status).toBe(401);
    expect((await bearer(app, 'typo', victim)).status).toBe(401);
  });

  it('A23 with no trusted proxies X-Forwarded-For is ignored: the socket peer is the client', async () => {
    const app = appWith('a23-no-proxies');
    await statuses(22, (i) => bearer(app, `guess-${i}`, PROXY, { 'x-forwarded-for': `198.51.100.${i + 1}` }));
    expect((await bearer(app, 'typo', PROXY, { 'x-forwarded-for': '198.51.100.99' })).status).toBe(429);
  });
});

const secureOf = (res: { headers: Headers }) => res.headers.getSetCookie().map((line) => /;\s*secure(;|$)/i.test(line));

describe('A23 cookies are Secure and portal links https behind TLS', () => {
  it('A23 issue 30: a sign-in through the trusted proxy with X-Forwarded-Proto: https sets a Secure cookie', async () => {
    const app = appWith('a23-cookie', { profile: behindProxy() });
    const operator = await createKey(app, 'operator', undefined, 'a23-cookie-operator');
    const browser = pageClient(app, { address: PROXY });
    const tls = { 'x-forwarded-for': '198.51.100.70', 'x-forwarded-proto': 'https' };
    expect(secureOf(await browser.get('/console/sign-in', tls))).toEqual([true]);
    const signedIn = await browser.post('/console/sign-in', { token: operator.token }, tls);
    expect(signedIn.status).toBe(303);
    expect(secureOf(signedIn)).toEqual([true]);
  });

  it('A23 a profile public_url of https makes every cookie Secure; plain http with neither is not (local development)', async () => {
    const tls = appWith('a23-cookie-public', { profile: testProfile({ http: { public_url: 'https://pay.example.com' } }) });
    expect(secureOf(await pageClient(tls).get('/console/sign-in'))).toEqual([true]);
    const plain = appWith('a23-cookie-plain', { profile: behindProxy() });
    // An untrusted peer's X-Forwarded-Proto is not believed.
    expect(
      secureOf(await pageClient(plain, { address: '203.0.113.71' }).get('/console/sign-in', { 'x-forwarded-proto': 'https' })),
    ).toEqual([false]);
  });

  it('A23 issue 30: a portal link uses the profile public_url, else https when the trusted proxy says so', async () => {
    // The URL the node server builds from the Host header: http, since TLS ends at the proxy.
    const mint = async (app: App, origin: string, address: string, headers: Record<string, string>) => {
      const operator = await createKey(app, 'operator', undefined, 'a23-link-operator');
      const res = await app.request(
        `${origin}/admin/v1/portal-links`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${operator.token}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ merchant_account: uniqueMerchant('a23-link') }),
        },
        { remoteAddress: address },
      );
      expect(res.status).toBe(201);
      return ((await res.json()) as { url: string }).url;
    };
    const configured = appWith('a23-link-public', { profile: testProfile({ http: { public_url: 'https://pay.example.com' } }) });
    expect(await mint(configured, 'http://internal:3000', '198.51.100.80', {})).toMatch(
      /^https:\/\/pay\.example\.com\/portal\/enter\?token=/,
    );
    const proxied = appWith('a23-link-proxy', { profile: behindProxy() });
    const tls = { 'x-forwarded-for': '198.51.100.81', 'x-forwarded-proto': 'https' };
    const origin = 'http://apipay.example.com';
    expect(await mint(proxied, origin, PROXY, tls)).toMatch(/^https:\/\/apipay\.example\.com\/portal\/enter\?token=/);
    expect(await mint(proxied, origin, '203.0.113.82', tls)).toMatch(/^http:\/\/apipay\.example\.com\/portal\/enter\?token=/);
  });
});
