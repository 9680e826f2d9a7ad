// A12 people, not keys (issue 23, item 1), on the real PostgreSQL: keys belong to a principal with a unique name;
// dual control needs two different people (never a sibling key of the proposer, a key the proposer minted, or the
// bootstrap token); the bootstrap token creates admin keys and moves no money; audit rows name the person.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { adjustmentBody, adjustmentProfile, reviewPayment } from '../helpers/adjustments.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'people' });
let app: ReturnType<typeof testApp>;
let alice: Caller; // an admin: may propose, and mint keys
let bob: Caller;
const tag = randomUUID().slice(0, 6);
const provider = `people-${tag}`;

beforeAll(async () => {
  const profile = adjustmentProfile(provider, { dualControlAbove: { EUR: 1000 } });
  app = testApp({ db: world.db, temporal: world.temporal.client, taskQueues: uniqueTaskQueues('people'), profile });
  alice = await createKey(app, 'admin', undefined, `alice-${tag}`, `Alice ${tag}`);
  bob = await createKey(app, 'operator', undefined, `bob-${tag}`, `Bob ${tag}`);
});
const payment = () => reviewPayment(world.db, provider, 'people');
const adjustment = (ref: string, amount: string) => adjustmentBody(provider, ref, amount, 'statement line 3');

describe('A12 people, not keys', () => {
  it('A12 the bootstrap token creates admin keys only, and moves no money', async () => {
    expect((await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', { name: `op-${tag}`, role: 'operator' })).status).toBe(403);
    const ref = await payment();
    const adjusted = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/ledger/adjustments', adjustment(ref, '10'));
    expect(adjusted.status).toBe(403);
    expect(adjusted.json.error.message).toMatch(/bootstrap token/);
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
    const proposed = await callAs(app, alice.token, 'POST', '/ledger/adjustments', adjustment(ref, '5000'));
    expect(proposed.status).toBe(202);
    expect(
      (await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/ledger/adjustments/proposals/${proposed.json.id}/approve`)).status,
    ).toBe(403);
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
  });

  it('A12 a person is named once: a second key for the same name joins that person', async () => {
    const one = await callAs(app, alice.token, 'POST', '/api-keys', {
      name: `k1-${tag}`,
      role: 'viewer',
      person: `Carol ${tag}`,
    });
    const two = await callAs(app, alice.token, 'POST', '/api-keys', {
      name: `k2-${tag}`,
      role: 'viewer',
      person: `carol ${tag}`,
    });
    expect(one.status).toBe(201);
    expect(two.json.principal_id).toBe(one.json.principal_id);
    const other = await callAs(app, alice.token, 'POST', '/api-keys', {
      name: `k3-${tag}`,
      role: 'viewer',
      person: `Dan ${tag}`,
    });
    expect(other.json.principal_id).not.toBe(one.json.principal_id);
  });

  it('A12 a sibling key of the proposer cannot approve; neither can a key the proposer minted for someone new', async () => {
    const ref = await payment();
    const proposed = await callAs(app, alice.token, 'POST', '/ledger/adjustments', adjustment(ref, '5000'));
    expect(proposed.status).toBe(202);
    const approve = `/ledger/adjustments/proposals/${proposed.json.id}/approve`;
    const sibling = await callAs(app, alice.token, 'POST', '/api-keys', {
      name: `alice-2-${tag}`,
      role: 'operator',
      person: `Alice ${tag}`,
    });
    const bySibling = await callAs(app, sibling.json.token, 'POST', approve);
    expect(bySibling.status).toBe(403);
    expect(bySibling.json.error.message).toMatch(/person who proposed/);
    const puppet = await callAs(app, alice.token, 'POST', '/api-keys', {
      name: `mallory-${tag}`,
      role: 'operator',
      person: `Mallory ${tag}`,
    });
    const byPuppet = await callAs(app, puppet.json.token, 'POST', approve);
    expect(byPuppet.status).toBe(403);
    expect(byPuppet.json.error.message).toMatch(/created by the person who proposed/);
    expect(await ledgerRowsFor(world.db, ref)).toEqual([]);
    const byBob = await callAs(app, bob.token, 'POST', approve);
    expect(byBob.status).toBe(200);
    expect(await ledgerRowsFor(world.db, ref)).toHaveLength(1);
  });

  it('A12 the single-person budget is the person s: a sibling key does not get a fresh one', async () => {
    const ref = await payment();
    const erin = await createKey(app, 'operator', undefined, `erin-${tag}`, `Erin ${tag}`);
    const erin2 = await createKey(app, 'operator', undefined, `erin-2-${tag}`, `Erin ${tag}`);
    expect((await callAs(app, erin.token, 'POST', '/ledger/adjustments', adjustment(ref, '800'))).status).toBe(201);
    const other = await payment();
    expect((await callAs(app, erin2.token, 'POST', '/ledger/adjustments', adjustment(other, '800'))).status).toBe(202);
  });

  it('A12 audit rows name the person behind the key', async () => {
    const ref = await payment();
    const made = await callAs(app, bob.token, 'POST', '/ledger/adjustments', adjustment(ref, '5'));
    expect(made.status).toBe(201);
    const audit = await callAs(app, alice.token, 'GET', `/audit-events?target_id=${made.json.id}`);
    expect(audit.json.data[0].actor).toMatchObject({
      key_id: bob.id,
      person: `Bob ${tag}`,
      principal_id: expect.stringMatching(/^prn_/),
    });
  });
});
