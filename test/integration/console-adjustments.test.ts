// A30, A27 for L3 on the real PostgreSQL: a ledger adjustment above the dual-control limit, proposed by one IdP
// person through the admin API, waits in the console (/console/adjustments) with an Approve button, and a second IdP
// person signed in through the identity provider (code + PKCE against the local provider of
// test/helpers/oidc-provider.ts) approves it there with a fresh second factor: posted, audited under that person's
// subject. The proposer's own approval is refused, a stale factor is sent to step-up, API-key and ADMIN_TOKEN
// sessions approve nothing, a viewer sees no button, and a proposal by a service key needs two people.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjustmentProposals, auditEvents } from '../../src/db/schema/index.js';
import { callAs, createKey } from '../helpers/access.js';
import { adjustmentProfile, reviewPayment } from '../helpers/adjustments.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { consoleIdp, OIDC_CLIENT, startOidcProvider } from '../helpers/oidc-provider.js';
import { pageClient, type PageClient } from '../helpers/pages.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

let op: Awaited<ReturnType<typeof startOidcProvider>>;
let app: ReturnType<typeof testApp>;
const world = useWorld({ label: 'console-adj' });
const tag = randomUUID().slice(0, 6);
const provider = `cadj-${tag}`;

beforeAll(async () => {
  op = await startOidcProvider();
  process.env.TEST_IDP_CONSOLE_SECRET = OIDC_CLIENT.secret;
  app = testApp({
    db: world.database.db,
    temporal: lazyTemporal(),
    taskQueues: uniqueTaskQueues('console-adj'),
    profile: adjustmentProfile(provider, {
      dualControlAbove: { EUR: 100_000 },
      idp: consoleIdp(op),
    }),
  });
});
afterAll(async () => op?.close());

const now = () => Math.floor(Date.now() / 1000);
const person = (label: string, groups = ['finance-approver']) => ({
  sub: `${label}-${randomUUID()}`,
  name: `${label} ${tag}`,
  email: `${label.toLowerCase()}@apipay.example`,
  groups,
});
type Person = ReturnType<typeof person>;
const keyOf = (p: Person) => `idp:${p.sub}@${op.issuer}`;
const claims = (p: Person, extra: Record<string, unknown> = {}) => ({ ...p, amr: ['pwd', 'otp'], auth_time: now(), ...extra });

/** The person signs in to the console through the IdP (code + PKCE); the browser holds the session. */
async function consoleAs(p: Person, extra: Record<string, unknown> = {}): Promise<PageClient> {
  const browser = pageClient(app);
  const login = await browser.get('/console/login?return=/console/adjustments');
  expect(login.status, login.text).toBe(303);
  const { callback } = op.authorize(login.headers.get('location')!, claims(p, extra));
  expect((await browser.get(callback)).status).toBe(200);
  return browser;
}

async function keySession(token: string): Promise<PageClient> {
  const browser = pageClient(app);
  await browser.get('/console/sign-in');
  expect((await browser.post('/console/sign-in', { token })).status).toBe(303);
  return browser;
}

async function propose(bearer: string, amountMinor: string) {
  const ref = await reviewPayment(world.database.db, provider, 'cadj');
  const res = await callAs(app, bearer, 'POST', '/ledger/adjustments', {
    provider,
    payment_reference: ref,
    amount_minor: amountMinor,
    currency: 'EUR',
    reason: 'statement line 12',
  });
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  return { id: res.json.id as string, ref, page: `/console/adjustments/${res.json.id as string}` };
}

describe('A30 the console approves ledger adjustment proposals', () => {
  it('A30 one person proposes through the admin API; the proposer is refused, a stale factor steps up, a second person approves in the console and the ledger posts under their subject', async () => {
    const ana = person('Ana');
    const ben = person('Ben');
    const { id, ref, page } = await propose(await op.mint(ana.sub, { name: ana.name, groups: ana.groups }), '250000');

    const benConsole = await consoleAs(ben);
    // The shared test database holds other files' waiting proposals: the queue shows the oldest, counts them all, and
    // finds one by its payment reference.
    const queue = await benConsole.get('/console/adjustments');
    expect(queue.status, queue.text).toBe(200);
    expect(queue.text).toMatch(/id="adjustment-count"[^>]*>\s*[1-9]\d* waiting/);
    const list = await benConsole.get(`/console/adjustments?payment=${encodeURIComponent(ref)}`);
    expect(list.status, list.text).toBe(200);
    expect(list.text).toContain(`1 waiting for ${ref}`);
    expect(list.text).toContain(id);
    expect(list.text).toContain('EUR 2500.00');
    expect(list.text).toContain(ana.name);
    const detail = await benConsole.get(page);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain('id="approve"');
    expect(detail.text).toContain(keyOf(ana));

    // The proposer, signed in to the console with a fresh factor: refused, nothing posted.
    const anaConsole = await consoleAs(ana);
    await anaConsole.get(page);
    const own = await anaConsole.post(`${page}/approve`);
    expect(own.status, own.text).toBe(403);
    expect(own.text).toMatch(/you proposed/);

    // A stale second factor is sent back through the IdP and returns to this page.
    const stale = await consoleAs(ben, { auth_time: now() - 3600 });
    await stale.get(page);
    const stepUp = await stale.post(`${page}/approve`);
    expect(stepUp.status).toBe(303);
    expect(stepUp.headers.get('location')).toBe(`/console/login?step_up=1&return=${encodeURIComponent(`${page}?step_up=1`)}`);
    expect(await ledgerRowsFor(world.database.db, ref)).toEqual([]);

    // Ben with a fresh factor: posted.
    const approved = await benConsole.post(`${page}/approve`);
    expect(approved.status, approved.text).toBe(303);
    expect(approved.headers.get('location')).toBe(`${page}?approved=1`);
    expect((await ledgerRowsFor(world.database.db, ref)).length).toBeGreaterThan(0);
    const [closed] = await world.database.db.select().from(adjustmentProposals).where(eq(adjustmentProposals.id, id));
    expect(closed).toMatchObject({ closed: 'approved', closedByKey: keyOf(ben), proposedByKey: keyOf(ana) });
    const [audit] = await world.database.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, 'ledger.adjust'), eq(auditEvents.targetId, closed!.adjustmentId!)));
    expect(audit).toMatchObject({ actorKeyId: keyOf(ben), actorName: ben.name });
    const after = await benConsole.get(`${page}?approved=1`);
    expect(after.text).toContain('approved');
    expect(after.text).not.toContain('id="approve"');
    // Approved once: a second click is a conflict, and the queue no longer lists it.
    expect((await benConsole.post(`${page}/approve`)).status).toBe(409);
    expect((await benConsole.get(`/console/adjustments?payment=${encodeURIComponent(ref)}`)).text).not.toContain(id);
  });

  it('A30 API-key and ADMIN_TOKEN sessions approve nothing; a viewer sees no Approve button and is refused', async () => {
    const ana = person('Ann');
    const { page, ref } = await propose(await op.mint(ana.sub, { name: ana.name, groups: ana.groups }), '300000');
    const key = await keySession((await createKey(app, 'operator', undefined, `cadj-key-${tag}`)).token);
    await key.get(page);
    const byKey = await key.post(`${page}/approve`);
    expect(byKey.status).toBe(403);
    expect(byKey.text).toMatch(/identity provider/);
    const bootstrap = await keySession(TEST_ADMIN_TOKEN);
    await bootstrap.get(page);
    expect((await bootstrap.post(`${page}/approve`)).status).toBe(403);
    const viewer = await consoleAs(person('Vic', ['viewer']));
    const seen = await viewer.get(page);
    expect(seen.status).toBe(200);
    expect(seen.text).not.toContain('id="approve"');
    expect((await viewer.post(`${page}/approve`)).status).toBe(403);
    expect(await ledgerRowsFor(world.database.db, ref)).toEqual([]);
  });

  it('A30 a proposal by a service key needs two people: the first approval is recorded, the second posts', async () => {
    const service = await createKey(app, 'operator', undefined, `cadj-svc-${tag}`);
    const { page, ref } = await propose(service.token, '400000');
    const first = await consoleAs(person('Cora'));
    await first.get(page);
    const one = await first.post(`${page}/approve`);
    expect(one.status, one.text).toBe(303);
    expect(one.headers.get('location')).toBe(`${page}?first=1`);
    expect(await ledgerRowsFor(world.database.db, ref)).toEqual([]);
    expect((await first.get(`${page}?first=1`)).text).toMatch(/a second person/);
    const second = await consoleAs(person('Dan'));
    await second.get(page);
    expect((await second.post(`${page}/approve`)).headers.get('location')).toBe(`${page}?approved=1`);
    expect((await ledgerRowsFor(world.database.db, ref)).length).toBeGreaterThan(0);
  });
});
