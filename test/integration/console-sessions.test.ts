// A16 on the real PostgreSQL: console and portal sessions end at once on sign-out (issue 23: a copied console cookie
// kept working for 8 h), on key revocation and when the role is no longer the one signed in with; and a portal link
// never signs a browser in on a GET (login CSRF): the GET asks, a POST with the page's CSRF token signs in.
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { consoleSessions } from '../../src/db/schema/index.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { pageClient, type PageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
let app: ReturnType<typeof testApp>;
let operator: Caller;
let admin: Caller;

const world = useWorld({ label: 'console-sessions' });
beforeAll(async () => {
  database = world.database;
  app = testApp({ db: database.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('console-sessions') });
  operator = await createKey(app, 'operator', undefined, 'sessions-operator');
  admin = await createKey(app, 'admin', undefined, 'sessions-admin');
});

async function signIn(token: string): Promise<PageClient> {
  const browser = pageClient(app);
  await browser.get('/console/sign-in');
  const res = await browser.post('/console/sign-in', { token });
  expect(res.status, res.text).toBe(303);
  expect((await browser.get('/console/deliveries')).status).toBe(200);
  return browser;
}

/** A second browser holding a copy of the first one's cookies (a stolen or copied session). */
function copyOf(browser: PageClient): PageClient {
  const copy = pageClient(app);
  for (const [k, v] of browser.cookies) copy.cookies.set(k, v);
  return copy;
}

describe('A16 console sessions end at once', () => {
  it('A16 issue 23: after sign-out a copied console cookie no longer works', async () => {
    const browser = await signIn(operator.token);
    const copy = copyOf(browser);
    expect((await copy.get('/console/deliveries')).status).toBe(200);
    expect((await browser.post('/console/sign-out')).status).toBe(303);
    const after = await copy.get('/console/deliveries');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/console/sign-in');
  });

  it('A16 revoking the key ends its console sessions at once, and the row says why', async () => {
    const key = await createKey(app, 'operator', undefined, 'sessions-revoked');
    const browser = await signIn(key.token);
    expect((await callAs(app, admin.token, 'POST', `/api-keys/${key.id}/revoke`)).status).toBe(200);
    expect((await browser.get('/console/deliveries')).status).toBe(303);
    const rows = await database.db.select().from(consoleSessions).where(eq(consoleSessions.keyId, key.id));
    expect(rows.map((r) => r.endedReason)).toEqual(['credential_gone']);
  });

  it('A16 a session whose principal no longer has the role it signed in with ends', async () => {
    const key = await createKey(app, 'operator', undefined, 'sessions-role');
    const browser = await signIn(key.token);
    // The role the key has now differs from the session's (as after a role change of the person behind it).
    await database.db.update(consoleSessions).set({ role: 'admin' }).where(eq(consoleSessions.keyId, key.id));
    expect((await browser.get('/console/deliveries')).status).toBe(303);
    const [row] = await database.db.select().from(consoleSessions).where(eq(consoleSessions.keyId, key.id));
    expect(row!.endedReason).toBe('role_changed');
  });
});

describe('A16 a portal link signs in by POST only', () => {
  it('A16 issue 23: GET /portal/enter shows a confirmation and signs nobody in; a POST without the page’s CSRF token is refused', async () => {
    const account = uniqueMerchant('sessions-enter');
    const minted = await callAs(app, operator.token, 'POST', '/portal-links', { merchant_account: account });
    const url = new URL(minted.json.url);
    const token = url.searchParams.get('token')!;
    const victim = pageClient(app);
    const confirm = await victim.get(`${url.pathname}${url.search}`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('method="post" action="/portal/enter"');
    expect((await victim.get('/portal/deliveries')).status).toBe(303); // the GET signed nobody in
    // Another site's form cannot carry the victim's CSRF token.
    const forged = await app.request('/portal/enter', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...victim.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(forged.status).toBe(403);
    expect((await victim.get('/portal/deliveries')).status).toBe(303);
    // The page's own button does sign in.
    await victim.get(`${url.pathname}${url.search}`);
    expect((await victim.post('/portal/enter', { token })).status).toBe(303);
    expect((await victim.get('/portal/deliveries')).status).toBe(200);
  });
});
