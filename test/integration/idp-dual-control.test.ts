// A27, A28 on the real PostgreSQL: with an identity provider configured, dual control is between two IdP people.
// The puppet attacks (ADMIN_TOKEN minting two admin keys for invented people; one admin minting two operator
// keys) are refused; the proposer's second token is still the proposer; a stale or missing second factor answers
// step-up; a proposal by an API key needs two IdP people; the budget is the IdP subject's; ADMIN_TOKEN in
// production only creates service keys. Tokens from a local issuer (real HTTP discovery + JWKS, test/helpers/idp.ts).
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../../src/db/schema/index.js';
import { callAs } from '../helpers/access.js';
import { testApp, TEST_API_ENV } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { startLocalIssuer, type LocalIssuer } from '../helpers/idp.js';
import { pageClient } from '../helpers/pages.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { adjustmentBody, adjustmentProfile, reviewPayment } from '../helpers/adjustments.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'idp-dual-control' });
let issuer: LocalIssuer;
let app: ReturnType<typeof testApp>;
const tag = randomUUID().slice(0, 6);
const provider = `idp-dc-${tag}`;
let profile: ReturnType<typeof adjustmentProfile>;

beforeAll(async () => {
  issuer = await startLocalIssuer();
  profile = adjustmentProfile(provider, { idp: issuer.profile, dualControlAbove: { EUR: 100_000 } });
  app = testApp({ db: world.db, temporal: world.temporal.client, taskQueues: uniqueTaskQueues('idp-dc'), profile });
});
afterAll(async () => {
  await issuer?.close();
});

const payment = () => reviewPayment(world.db, provider, 'idp-dc');
const adjustment = (ref: string, amount: string) => adjustmentBody(provider, ref, amount, 'statement line 9');
const person = (label: string) => ({ sub: `${label}-${randomUUID()}`, name: `${label} ${tag}` });
const tokenOf = (p: { sub: string; name: string }, claims: Record<string, unknown> = {}) =>
  issuer.mint(p.sub, { name: p.name, groups: ['finance-approver'], ...claims });
const approvePath = (id: string) => `/ledger/adjustments/proposals/${id}/approve`;

describe('A27 the puppet attacks of issue 29 are refused', () => {
  it('A27 ADMIN_TOKEN creates no people; two service admin keys it mints cannot complete dual control', async () => {
    const human = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', {
      name: `x-one-${tag}`,
      role: 'admin',
      person: 'X One',
      kind: 'human',
    });
    expect(human.status).toBe(403);
    expect(human.json.error.message).toMatch(/sign in through the identity provider/);
    const one = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', {
      name: `x-one-${tag}`,
      role: 'admin',
      person: `X One ${tag}`,
    });
    const two = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', {
      name: `x-two-${tag}`,
      role: 'admin',
      person: `X Two ${tag}`,
    });
    expect([one.status, two.status]).toEqual([201, 201]);
    const ref = await payment();
    const proposed = await callAs(app, one.json.token, 'POST', '/ledger/adjustments', adjustment(ref, '700000000'));
    expect(proposed.status).toBe(202);
    const approved = await callAs(app, two.json.token, 'POST', approvePath(proposed.json.id));
    expect(approved.status).toBe(403);
    expect(approved.json.error.message).toMatch(/signed in through the identity provider/);
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
  });

  it('A27 two operator keys minted by one admin cannot complete dual control', async () => {
    const admin = await tokenOf(person('Ada'), { groups: ['admin'] });
    const keys = [];
    for (const n of ['p1', 'p2']) {
      const made = await callAs(app, admin, 'POST', '/api-keys', {
        name: `${n}-${tag}`,
        role: 'operator',
        person: `${n} ${tag}`,
      });
      expect(made.status).toBe(201);
      keys.push(made.json.token as string);
    }
    // A key may not claim a colleague who is a person either.
    await callAs(app, admin, 'POST', '/api-keys', { name: `h-${tag}`, role: 'viewer', person: `Hal ${tag}`, kind: 'human' }).then(
      (r) => expect(r.status).toBe(403),
    );
    const ref = await payment();
    const proposed = await callAs(app, keys[0], 'POST', '/ledger/adjustments', adjustment(ref, '600000000'));
    expect(proposed.status).toBe(202);
    expect((await callAs(app, keys[1], 'POST', approvePath(proposed.json.id))).status).toBe(403);
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
  });
});

describe('A27 two IdP people, each with a fresh second factor', () => {
  it('A27 the proposer s second session is still the proposer; stale or missing factors step up; a second person posts', async () => {
    const ana = person('Ana');
    const ben = person('Ben');
    const ref = await payment();
    const proposed = await callAs(app, await tokenOf(ana), 'POST', '/ledger/adjustments', adjustment(ref, '200000'));
    expect(proposed.status).toBe(202);
    const path = approvePath(proposed.json.id);
    // Another token of the same subject (another session, another sid): the same person.
    const again = await callAs(app, await tokenOf(ana, { sid: randomUUID() }), 'POST', path);
    expect(again.status).toBe(403);
    expect(again.json.error.message).toMatch(/you proposed adp_/);
    const stale = await callAs(app, await tokenOf(ben, { auth_time: Math.floor(Date.now() / 1000) - 600 }), 'POST', path);
    expect(stale.status).toBe(401);
    expect(stale.json.error).toMatchObject({ code: 'step_up_required', details: { max_age: 300 } });
    expect(stale.headers.get('www-authenticate')).toMatch(/insufficient_user_authentication/);
    const noFactor = await callAs(app, await tokenOf(ben, { amr: ['pwd'] }), 'POST', path);
    expect(noFactor.json.error.code).toBe('step_up_required');
    const noTime = await callAs(app, await tokenOf(ben, { auth_time: undefined }), 'POST', path);
    expect(noTime.json.error.code).toBe('step_up_required');
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
    const approved = await callAs(app, await tokenOf(ben), 'POST', path);
    expect(approved.status, approved.text).toBe(200);
    expect((await ledgerRowsFor(world.db, ref)).length).toBeGreaterThan(0);
    // Audit rows name both IdP subjects.
    const proposal = await world.db.select().from(auditEvents).where(eq(auditEvents.targetId, proposed.json.id));
    expect(proposal[0]).toMatchObject({
      action: 'ledger_adjustment.propose',
      actorKeyId: `idp:${ana.sub}@${issuer.issuer}`,
      actorPerson: ana.name,
    });
    const posted = await world.db.select().from(auditEvents).where(eq(auditEvents.targetId, approved.json.id));
    expect(posted[0]).toMatchObject({
      action: 'ledger.adjust',
      actorKeyId: `idp:${ben.sub}@${issuer.issuer}`,
      actorPerson: ben.name,
    });
  });

  it('A27 a proposal by an API key needs two IdP people: the first approval is recorded, the same person twice is refused', async () => {
    const admin = await tokenOf(person('Ida'), { groups: ['admin'] });
    const made = await callAs(app, admin, 'POST', '/api-keys', { name: `svc-${tag}`, role: 'operator', person: `svc ${tag}` });
    const ref = await payment();
    const proposed = await callAs(app, made.json.token, 'POST', '/ledger/adjustments', adjustment(ref, '300000'));
    expect(proposed.status).toBe(202);
    const path = approvePath(proposed.json.id);
    const cy = person('Cy');
    const first = await callAs(app, await tokenOf(cy), 'POST', path);
    expect(first.status, first.text).toBe(202);
    expect(first.json).toMatchObject({ id: proposed.json.id, closed: null });
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
    const twice = await callAs(app, await tokenOf(cy, { sid: randomUUID() }), 'POST', path);
    expect(twice.status).toBe(403);
    expect(twice.json.error.message).toMatch(/already approved/);
    const second = await callAs(app, await tokenOf(person('Di')), 'POST', path);
    expect(second.status, second.text).toBe(200);
    expect((await ledgerRowsFor(world.db, ref)).length).toBeGreaterThan(0);
    const audit = await world.db.select().from(auditEvents).where(eq(auditEvents.targetId, proposed.json.id));
    expect(audit.map((a) => a.action)).toContain('ledger_adjustment.first_approval');
  });

  it('A27 the single-person budget is the IdP subject s, whichever token they use', async () => {
    const eve = person('Eve');
    const ref = await payment();
    expect((await callAs(app, await tokenOf(eve), 'POST', '/ledger/adjustments', adjustment(ref, '60000'))).status).toBe(201);
    const other = await payment();
    const second = await callAs(
      app,
      await tokenOf(eve, { sid: randomUUID() }),
      'POST',
      '/ledger/adjustments',
      adjustment(other, '60000'),
    );
    expect(second.status).toBe(202); // 120,000 alone in 24 h > 100,000: a proposal
  });
});

describe('A28 ADMIN_TOKEN once an IdP is configured', () => {
  it('A28 in production it creates service keys and is refused everywhere else, the console included', async () => {
    const production = testApp({
      db: world.db,
      temporal: world.temporal.client,
      taskQueues: uniqueTaskQueues('idp-prod'),
      profile,
      env: { ...TEST_API_ENV, NODE_ENV: 'production' },
    });
    const key = await callAs(production, TEST_ADMIN_TOKEN, 'POST', '/api-keys', {
      name: `boot-${tag}`,
      role: 'admin',
      person: `boot ${tag}`,
    });
    expect(key.status).toBe(201);
    const read = await callAs(production, TEST_ADMIN_TOKEN, 'GET', '/audit-events?limit=1');
    expect(read.status).toBe(403);
    expect(read.json.error.message).toMatch(/only creates service keys/);
    // Nor does it sign in to the console.
    const page = pageClient(production);
    await page.get('/console/sign-in');
    expect((await page.post('/console/sign-in', { token: TEST_ADMIN_TOKEN })).status).not.toBe(303);
    expect((await page.get('/console/deliveries')).status).not.toBe(200);
    // A person of the IdP is unaffected.
    expect((await callAs(production, await tokenOf(person('Flo')), 'GET', '/audit-events?limit=1')).status).toBe(200);
  });
});
