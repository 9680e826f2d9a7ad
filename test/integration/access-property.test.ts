// A20 property on the real PostgreSQL: random sequences of requests by random principals (every staff role, the
// account's merchant, another merchant, an operator's and an admin's portal link), over the admin API and the
// pages. Whatever the order: no response shows a signing secret to anyone but an admin or the account's own merchant
// (an admin's link included), and every change that succeeded has an audit row of its request naming the person.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { auditEvents } from '../../src/db/schema/index.js';
import { createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient, type PageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let app: ReturnType<typeof testApp>;
const mine = uniqueMerchant('prop-a');
const theirs = uniqueMerchant('prop-b');

const WHO = ['viewer', 'operator', 'admin', 'merchant', 'foreign', 'operatorLink', 'adminLink'] as const;
type Who = (typeof WHO)[number];
interface Actor {
  /** A bearer token for the admin API (links have none). */
  token?: string;
  browser: PageClient;
  surface: 'console' | 'portal';
  /** The name the audit log must carry for this actor's changes. */
  person: string;
}
const actors = {} as Record<Who, Actor>;
const endpoints: Record<'mine' | 'theirs', string[]> = { mine: [], theirs: [] };
/** An admin, or the endpoint's own account: its merchant key (mine's or theirs'), or an admin's link to mine. */
const mayOwn = (who: Who, account: 'mine' | 'theirs') =>
  who === 'admin' ||
  (account === 'mine' && (who === 'merchant' || who === 'adminLink')) ||
  (account === 'theirs' && who === 'foreign');

async function signedIn(surface: 'console' | 'portal', key: Caller): Promise<PageClient> {
  const browser = pageClient(app);
  await browser.get(`/${surface}/sign-in`);
  expect((await browser.post(`/${surface}/sign-in`, { token: key.token })).status).toBe(303);
  await browser.get(`/${surface}/deliveries`);
  return browser;
}

async function linkBrowser(minter: Caller): Promise<PageClient> {
  const res = await app.request('/admin/v1/portal-links', {
    method: 'POST',
    headers: { authorization: `Bearer ${minter.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ merchant_account: mine, ttl: '1h' }),
  });
  const url = new URL(((await res.json()) as { url: string }).url);
  const browser = pageClient(app);
  await browser.get(`${url.pathname}${url.search}`);
  expect((await browser.post('/portal/enter', { token: url.searchParams.get('token')! })).status).toBe(303);
  await browser.get('/portal/deliveries');
  return browser;
}

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  app = testApp({ db: database.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('access-property') });
  const keys = {
    viewer: await createKey(app, 'viewer', undefined, 'prop-viewer'),
    operator: await createKey(app, 'operator', undefined, 'prop-operator'),
    admin: await createKey(app, 'admin', undefined, 'prop-admin'),
    merchant: await createKey(app, 'merchant', mine, 'prop-merchant'),
    foreign: await createKey(app, 'merchant', theirs, 'prop-foreign'),
  };
  for (const who of ['viewer', 'operator', 'admin'] as const)
    actors[who] = {
      token: keys[who].token,
      browser: await signedIn('console', keys[who]),
      surface: 'console',
      person: `prop-${who}`,
    };
  for (const who of ['merchant', 'foreign'] as const)
    actors[who] = {
      token: keys[who].token,
      browser: await signedIn('portal', keys[who]),
      surface: 'portal',
      person: `prop-${who}`,
    };
  actors.operatorLink = { browser: await linkBrowser(keys.operator), surface: 'portal', person: 'prop-operator' };
  actors.adminLink = { browser: await linkBrowser(keys.admin), surface: 'portal', person: 'prop-admin' };
  for (const [side, account] of [
    ['mine', mine],
    ['theirs', theirs],
  ] as const)
    for (let i = 0; i < 2; i++)
      endpoints[side].push(
        (await insertEndpoint(database.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook', status: 'disabled' }))
          .id,
      );
});
afterAll(async () => {
  await database?.close();
});

type Step = {
  who: Who;
  action: 'rotate-api' | 'rotate-page' | 'read-api' | 'read-page' | 'update-api' | 'test-page';
  side: 'mine' | 'theirs';
  index: number;
};

const step: fc.Arbitrary<Step> = fc.record({
  who: fc.constantFrom(...WHO),
  action: fc.constantFrom('rotate-api', 'rotate-page', 'read-api', 'read-page', 'update-api', 'test-page'),
  side: fc.constantFrom('mine', 'theirs'),
  index: fc.integer({ min: 0, max: 1 }),
});

async function run(s: Step): Promise<{ status: number; text: string; changed: boolean; requestId: string }> {
  const a = actors[s.who];
  const id = endpoints[s.side][s.index]!;
  const requestId = `prop-${randomUUID()}`;
  const api = async (method: string, path: string, body?: unknown) => {
    if (!a.token) return { status: 0, text: '' }; // a link is no admin API credential
    const res = await app.request(`/admin/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${a.token}`,
        'x-request-id': requestId,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, text: await res.text() };
  };
  const page = (method: 'GET' | 'POST', path: string) =>
    method === 'GET'
      ? a.browser.get(`/${a.surface}${path}`, { 'x-request-id': requestId })
      : a.browser.post(`/${a.surface}${path}`, {}, { 'x-request-id': requestId });
  let r: { status: number; text: string };
  let mutating = true;
  if (s.action === 'rotate-api') r = await api('POST', `/webhook-endpoints/${id}/secret/rotate`);
  else if (s.action === 'rotate-page') r = await page('POST', `/endpoints/${id}/rotate`);
  else if (s.action === 'update-api') r = await api('PATCH', `/webhook-endpoints/${id}`, { description: `d-${requestId}` });
  else if (s.action === 'test-page') r = await page('POST', `/endpoints/${id}/test`);
  else {
    mutating = false;
    r = s.action === 'read-api' ? await api('GET', `/webhook-endpoints/${id}`) : await page('GET', `/endpoints/${id}`);
  }
  return { ...r, changed: mutating && r.status >= 200 && r.status < 300, requestId };
}

describe('A20 property: random principals, random requests', () => {
  it('A20 no secret is shown to anyone but an admin or the own merchant, and every change is audited with its person', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        for (const s of steps) {
          const r = await run(s);
          if (r.text.includes('whsec_'))
            expect(mayOwn(s.who, s.side), `${s.who} ${s.action} on ${s.side}: shown a secret`).toBe(true);
          if (r.changed) {
            const rows = await database.db.select().from(auditEvents).where(eq(auditEvents.clientRequestId, r.requestId)); // A24
            expect(rows.length, `${s.who} ${s.action}: no audit row`).toBeGreaterThan(0);
            for (const row of rows) expect(row.actorName, `${s.who} ${s.action}`).toContain(actors[s.who].person);
          }
        }
      }),
      { numRuns: 25, seed: 23 },
    );
  });
});
