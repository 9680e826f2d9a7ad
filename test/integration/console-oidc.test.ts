// A30: the console signs people in through the identity provider by authorization code + PKCE (openid-client),
// against a local OpenID Connect provider over real HTTP (test/helpers/oidc-provider.ts) and the real PostgreSQL:
// the redirect carries an S256 challenge, a state and a nonce; the callback opens a server-side session for the IdP
// person, whose name, e-mail and groups the header shows; a wrong state, a replayed callback and a wrong nonce sign
// nobody in; an approver whose second factor is stale is sent back through the IdP (prompt=login, max_age=0); an API
// key's session is refused approval outright. The end-to-end approval with Keycloak in Chromium: test/browser/console-idp.test.ts.
import { randomUUID } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSessions } from '../../src/db/schema/index.js';
import { createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { consoleIdp, OIDC_CLIENT, startOidcProvider } from '../helpers/oidc-provider.js';
import { pageClient, type PageClient } from '../helpers/pages.js';
import { testProfile } from '../helpers/profile.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

let op: Awaited<ReturnType<typeof startOidcProvider>>;
let app: ReturnType<typeof testApp>;
const world = useWorld({ label: 'console-oidc' });

beforeAll(async () => {
  op = await startOidcProvider();
  process.env.TEST_IDP_CONSOLE_SECRET = OIDC_CLIENT.secret;
  app = testApp({
    db: world.database.db,
    temporal: lazyTemporal(),
    taskQueues: uniqueTaskQueues('console-oidc'),
    profile: testProfile({
      idp: consoleIdp(op),
    }),
  });
});
afterAll(async () => op?.close());

const now = () => Math.floor(Date.now() / 1000);
const person = (sub: string, claims: Record<string, unknown> = {}) => ({
  sub,
  name: 'Fiona Finance',
  email: 'fiona@apipay.example',
  groups: ['finance-approver'],
  amr: ['pwd', 'otp'],
  auth_time: now(),
  ...claims,
});

/** GET /console/login, the person at the IdP, then the callback: the browser and what the IdP was asked. */
async function signIn(claims: Record<string, unknown>, path = '/console/login?return=/console/deliveries') {
  const browser = pageClient(app);
  const login = await browser.get(path);
  expect(login.status, login.text).toBe(303);
  const setCookie = login.headers.getSetCookie().find((c) => c.startsWith('apipay_console_oidc='))!;
  expect(setCookie).toMatch(/HttpOnly/i);
  expect(setCookie).toMatch(/SameSite=Lax/i);
  const { callback, params } = op.authorize(login.headers.get('location')!, claims);
  return { browser, callback, params, back: () => browser.get(callback) };
}

describe('A30 console sign-in through the identity provider', () => {
  it('A30 code + PKCE S256 + state + nonce; the session is the IdP person; the header shows name, e-mail and groups', async () => {
    const sub = `fiona-${randomUUID()}`;
    const { browser, params, back } = await signIn(person(sub));
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('state')).toBeTruthy();
    expect(params.get('nonce')).toBeTruthy();
    expect(params.get('client_id')).toBe(OIDC_CLIENT.id);
    expect(params.get('redirect_uri')).toBe('http://localhost/console/oidc/callback');
    expect(params.get('prompt')).toBeNull();
    const done = await back();
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('url=/console/deliveries');
    const session = done.headers.getSetCookie().find((c) => c.startsWith('apipay_console='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Strict/i);
    const page = await browser.get('/console/deliveries');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Fiona Finance');
    expect(page.text).toContain('fiona@apipay.example');
    expect(page.text).toContain('finance-approver');
    const rows = await world.database.db
      .select()
      .from(consoleSessions)
      .where(and(eq(consoleSessions.keyId, `idp:${sub}@${op.issuer}`), isNull(consoleSessions.endedAt)));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ subject: 'idp', role: 'operator' });
    // Sign-out ends the row like any other session.
    expect((await browser.post('/console/sign-out')).status).toBe(303);
    expect((await browser.get('/console/deliveries')).status).toBe(303);
  });

  it('A30 a wrong state, a replayed callback, a wrong nonce and an unmapped group sign nobody in', async () => {
    const forged = await signIn(person(`x-${randomUUID()}`));
    const wrongState = forged.callback.replace(/state=[^&]+/, 'state=forged');
    expect((await forged.browser.get(wrongState)).status).toBe(401);
    expect((await forged.browser.get(forged.callback)).status).toBe(400); // the pending sign-in is gone
    const replay = await signIn(person(`r-${randomUUID()}`));
    expect((await replay.back()).status).toBe(200);
    const thief = pageClient(app);
    expect((await thief.get(replay.callback)).status).toBe(400);
    const nonce = await signIn(person(`n-${randomUUID()}`, { nonce: 'not-the-one-asked-for' }));
    expect((await nonce.back()).status).toBe(401);
    const nobody = await signIn(person(`m-${randomUUID()}`, { groups: ['marketing'] }));
    const refused = await nobody.back();
    expect(refused.status).toBe(401);
    expect(refused.text).toMatch(/maps to an ApiPay role/);
    expect((await nobody.browser.get('/console/deliveries')).status).toBe(303);
  });

  it('A30 a stale second factor is sent back through the IdP (prompt=login, max_age=0, acr_values); the fresh sign-in returns to the page', async () => {
    const sub = `s-${randomUUID()}`;
    const stale = await signIn(person(sub, { auth_time: now() - 3600 }));
    expect((await stale.back()).status).toBe(200);
    const page = await stale.browser.get('/console/deliveries'); // any page: its CSRF token
    expect(page.status).toBe(200);
    const id = `reconcile:p:evt_${randomUUID()}`;
    const approve = await stale.browser.post(`/console/reviews/${encodeURIComponent(id)}/approve`);
    expect(approve.status, approve.text).toBe(303);
    const stepUp = approve.headers.get('location')!;
    expect(stepUp).toMatch(/^\/console\/login\?step_up=1&return=/);
    const login = await stale.browser.get(stepUp);
    expect(login.status).toBe(303);
    const { callback, params } = op.authorize(login.headers.get('location')!, person(sub));
    expect(params.get('prompt')).toBe('login');
    expect(params.get('max_age')).toBe('0');
    expect(params.get('acr_values')).toBe('mfa');
    const back = await stale.browser.get(callback);
    expect(back.status, back.text).toBe(200);
    expect(back.text).toContain(`url=/console/reviews/${encodeURIComponent(id)}?step_up=1`);
    // The step-up sign-in replaced the stale session: one open row for the person.
    const open = await world.database.db
      .select()
      .from(consoleSessions)
      .where(and(eq(consoleSessions.keyId, `idp:${sub}@${op.issuer}`), isNull(consoleSessions.endedAt)));
    expect(open).toHaveLength(1);

    // A step-up whose IdP answers an old auth_time anyway is refused (openid-client checks max_age).
    const again = await stale.browser.get(stepUp);
    const old = op.authorize(again.headers.get('location')!, person(sub, { auth_time: now() - 3600 }));
    expect((await stale.browser.get(old.callback)).status).toBe(401);
  });

  it('A30 an API key signed in to the console approves nothing (403), never sent to step-up', async () => {
    const key = await createKey(app, 'operator', undefined, 'oidc-key-operator');
    const browser: PageClient = pageClient(app);
    await browser.get('/console/sign-in');
    expect((await browser.post('/console/sign-in', { token: key.token })).status).toBe(303);
    await browser.get('/console/deliveries');
    const refused = await browser.post(`/console/reviews/${encodeURIComponent(`reconcile:p:evt_${randomUUID()}`)}/approve`);
    expect(refused.status).toBe(403);
    expect(refused.text).toMatch(/identity provider/);
  });
});
