// A15 on the real PostgreSQL: a portal link carries only what its minter may do for that account (issue 23: an
// operator's link rotated a signing secret and showed the new whsec_…), is single-use, revocable, audited on
// creation and on use with the minter named, and its session ends when the link would have.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { auditEvents } from '../../src/db/schema/index.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let app: ReturnType<typeof testApp>;
let clock = new Date();
const keys = {} as Record<'operator' | 'admin', Caller>;
const account = uniqueMerchant('portal-links');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  app = testApp({ db: database.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('portal-links'), now: () => clock });
  keys.operator = await createKey(app, 'operator', undefined, 'olga-operator');
  keys.admin = await createKey(app, 'admin', undefined, 'ada-admin');
});
afterAll(async () => {
  await database?.close();
});

async function mint(by: Caller, ttl?: string) {
  const res = await callAs(app, by.token, 'POST', '/portal-links', { merchant_account: account, ...(ttl ? { ttl } : {}) });
  expect(res.status, res.text).toBe(201);
  const url = new URL(res.json.url);
  return { id: res.json.id as string, path: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! };
}

/** Opens a link as a browser would: the confirmation page, then its POST (the page's own form). */
async function enter(link: { path: string; token: string }) {
  const browser = pageClient(app);
  const confirm = await browser.get(link.path);
  const entered = confirm.text.includes('action="/portal/enter"')
    ? await browser.post('/portal/enter', { token: link.token })
    : confirm;
  return { browser, confirm, entered };
}

describe('A15 a portal link carries only what its minter may do', () => {
  it('A15 issue 23: an operator’s link cannot rotate the signing secret or send a test event, and never shows a whsec_', async () => {
    const endpoint = await insertEndpoint(database.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook' });
    const { browser } = await enter(await mint(keys.operator));
    const detail = await browser.get(`/portal/endpoints/${endpoint.id}`);
    expect(detail.status).toBe(200);
    expect(detail.text).not.toContain('Rotate signing secret');
    expect(detail.text).not.toContain('Send test event');
    const rotated = await browser.post(`/portal/endpoints/${endpoint.id}/rotate`);
    expect(rotated.status).toBe(403);
    expect(rotated.text).not.toContain('whsec_');
    expect((await browser.post(`/portal/endpoints/${endpoint.id}/test`)).status).toBe(403);
  });

  it('A15 an admin’s link may rotate (a merchant may), and the audit row of the rotation names the admin behind the link', async () => {
    const endpoint = await insertEndpoint(database.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook' });
    const link = await mint(keys.admin);
    const { browser } = await enter(link);
    expect((await browser.get(`/portal/endpoints/${endpoint.id}`)).text).toContain('Rotate signing secret');
    const rotated = await browser.post(`/portal/endpoints/${endpoint.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.text).toContain('whsec_');
    const [row] = await database.db.select().from(auditEvents).where(eq(auditEvents.targetId, endpoint.id));
    expect(row).toMatchObject({ action: 'endpoint.rotate_secret', actorKeyId: `portal-link:${link.id}` });
    expect(row!.actorName).toContain('ada-admin');
    expect(row!.actorName).toContain(keys.admin.id);
  });
});

describe('A15 single use, revocation, audit and lifetime', () => {
  it('A15 a link opens one session; the second opening is refused', async () => {
    const link = await mint(keys.operator);
    const first = await enter(link);
    expect(first.entered.status).toBe(303);
    expect((await first.browser.get('/portal/deliveries')).status).toBe(200);
    const second = await enter(link);
    expect(second.entered.status).toBe(401);
    expect((await second.browser.get('/portal/deliveries')).status).toBe(303);
  });

  it('A15 DELETE /portal-links/{id} refuses the link and ends the session it opened at once; create, use and revoke are audited with the minter', async () => {
    const link = await mint(keys.operator);
    const { browser } = await enter(link);
    expect((await browser.get('/portal/deliveries')).status).toBe(200);
    const revoked = await callAs(app, keys.admin.token, 'DELETE', `/portal-links/${link.id}`);
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json).toMatchObject({ id: link.id, revoked_by: keys.admin.id });
    expect((await browser.get('/portal/deliveries')).status).toBe(303); // back to the sign-in page
    expect((await enter(link)).entered.status).toBe(401);
    expect((await callAs(app, keys.admin.token, 'DELETE', '/portal-links/pl_00000000000000000000000000')).status).toBe(404);

    const rows = await database.db.select().from(auditEvents).where(eq(auditEvents.targetId, link.id));
    const byAction = Object.fromEntries(rows.map((r) => [r.action, r]));
    expect(Object.keys(byAction).sort()).toEqual(['portal_link.create', 'portal_link.revoke', 'portal_link.use']);
    expect(byAction['portal_link.create']).toMatchObject({ actorKeyId: keys.operator.id, actorName: 'olga-operator' });
    expect(byAction['portal_link.create']!.after).toMatchObject({ merchant_account: account, created_by: keys.operator.id });
    expect(byAction['portal_link.use']!.actorName).toContain('olga-operator');
    expect(byAction['portal_link.revoke']).toMatchObject({ actorKeyId: keys.admin.id });
    expect(JSON.stringify(rows)).not.toContain(link.token);
  });

  it('A15 the portal session ends when the link would have, not 8 h later', async () => {
    clock = new Date();
    const { browser } = await enter(await mint(keys.operator, '2m'));
    expect((await browser.get('/portal/deliveries')).status).toBe(200);
    clock = new Date(clock.getTime() + 2 * 60_000 + 1_000);
    expect((await browser.get('/portal/deliveries')).status).toBe(303);
    clock = new Date();
  });

  it('A15 revoking the minter’s key ends the sessions of the links it minted', async () => {
    const minter = await createKey(app, 'operator', undefined, 'short-lived-operator');
    const { browser } = await enter(await mint(minter));
    expect((await browser.get('/portal/deliveries')).status).toBe(200);
    expect((await callAs(app, keys.admin.token, 'POST', `/api-keys/${minter.id}/revoke`)).status).toBe(200);
    expect((await browser.get('/portal/deliveries')).status).toBe(303);
  });
});
