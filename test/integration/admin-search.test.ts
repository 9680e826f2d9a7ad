// C4 on the real PostgreSQL: the delivery list is searched by payment reference, merchant account and event type,
// the reconciliation list by payment reference and provider event id; a merchant key's merchant_account filter
// only narrows within its own account; the filters are in the OpenAPI document.
import { randomUUID } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { deliveries, events, reconciliations } from '../../src/db/schema/index.js';
import { newId, reconciliationWorkflowId } from '../../src/shared/ids.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { insertEndpoint, uniqueEventId, uniqueMerchant } from '../helpers/outbound.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let app: ReturnType<typeof testApp>;
let merchantA: Caller;
const tag = randomUUID().slice(0, 8);
const accountA = uniqueMerchant('search-a');
const accountB = uniqueMerchant('search-b');
const refA = `pi_search_${tag}_a`;
const refB = `pi_search_${tag}_b`;
const provider = `search-${tag}`;
const ids: Record<string, string> = {};
const reconIds: string[] = [];

/** One event and its delivery; the payment reference sits in the body, as the console searches it. */
async function delivery(name: string, account: string, type: string, ref: string) {
  const endpoint = await insertEndpoint(database.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook' });
  const eventId = uniqueEventId();
  const body = { id: eventId, type, data: { object: { payment_reference: ref, amount: 1000 } } };
  await database.db.insert(events).values({
    eventPublicId: eventId,
    merchantAccount: account,
    type,
    livemode: false,
    createdUnix: 1_780_000_000,
    body: Buffer.from(JSON.stringify(body)),
  });
  const id = newId('whd');
  await database.db.insert(deliveries).values({ id, eventPublicId: eventId, endpointId: endpoint.id, merchantAccount: account });
  ids[name] = id;
}

const world = useWorld({ label: 'admin-search' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('search') });
  await delivery('aSucceeded', accountA, 'payment.succeeded', refA);
  await delivery('aRefunded', accountA, 'refund.created', refA);
  await delivery('bSucceeded', accountB, 'payment.succeeded', refB);
  await delivery('bOtherRef', accountB, 'payment.succeeded', refA); // same reference, other merchant
  for (const [i, ref] of [refA, refB].entries()) {
    const providerEventId = `evt_${tag}_${i}`;
    const id = reconciliationWorkflowId(provider, providerEventId);
    reconIds.push(id);
    await database.db.insert(reconciliations).values({
      id,
      provider,
      providerEventId,
      eventType: 'payment.succeeded',
      paymentReference: ref,
      amountMinor: 100n,
      currency: 'EUR',
      effectiveAt: new Date(),
      state: 'manual_review',
      acknowledgedAt: new Date(),
    });
  }
  merchantA = await createKey(app, 'merchant', accountA, `search-${tag}`);
});
afterAll(async () => {
  await database?.db.delete(reconciliations).where(inArray(reconciliations.id, reconIds));
});

const listed = async (path: string, token = TEST_ADMIN_TOKEN) => {
  const res = await callAs(app, token, 'GET', path);
  expect(res.status, res.text).toBe(200);
  return (res.json.data as Array<{ id: string }>).map((r) => r.id).sort();
};
const sorted = (...names: string[]) => names.map((n) => ids[n]!).sort();

describe('C4 delivery search', () => {
  it('payment_reference finds the deliveries whose event body carries it, across merchants', async () => {
    expect(await listed(`/webhook-deliveries?payment_reference=${refA}&limit=100`)).toEqual(
      sorted('aSucceeded', 'aRefunded', 'bOtherRef'),
    );
    expect(await listed(`/webhook-deliveries?payment_reference=${refB}&limit=100`)).toEqual(sorted('bSucceeded'));
    expect(await listed(`/webhook-deliveries?payment_reference=pi_search_${tag}_none`)).toEqual([]);
  });

  it('merchant_account and event_type narrow, alone and together with payment_reference', async () => {
    expect(await listed(`/webhook-deliveries?merchant_account=${accountA}&limit=100`)).toEqual(sorted('aSucceeded', 'aRefunded'));
    expect(await listed(`/webhook-deliveries?merchant_account=${accountB}&event_type=payment.succeeded`)).toEqual(
      sorted('bSucceeded', 'bOtherRef'),
    );
    expect(await listed(`/webhook-deliveries?payment_reference=${refA}&event_type=refund.created&limit=100`)).toEqual(
      sorted('aRefunded'),
    );
    expect(await listed(`/webhook-deliveries?payment_reference=${refA}&merchant_account=${accountB}`)).toEqual(
      sorted('bOtherRef'),
    );
  });

  it("a merchant key finds its own deliveries; another account's through the filter lists nothing", async () => {
    expect(await listed(`/webhook-deliveries?payment_reference=${refA}&limit=100`, merchantA.token)).toEqual(
      sorted('aSucceeded', 'aRefunded'),
    );
    expect(await listed(`/webhook-deliveries?merchant_account=${accountA}&limit=100`, merchantA.token)).toEqual(
      sorted('aSucceeded', 'aRefunded'),
    );
    expect(await listed(`/webhook-deliveries?merchant_account=${accountB}`, merchantA.token)).toEqual([]);
    expect(await listed(`/webhook-deliveries?payment_reference=${refB}`, merchantA.token)).toEqual([]);
  });

  it.each([
    ['/webhook-deliveries?event_type=Payment%20Succeeded', 'event_type'],
    ['/webhook-deliveries?payment_reference=', 'payment_reference'],
    ['/webhook-deliveries?provider_event_id=evt_1', 'provider_event_id'],
    ['/webhook-deliveries?payment_ref=pi_1', 'payment_ref'],
    ['/reconciliations?merchant_account=acct_1', 'merchant_account'],
    ['/reconciliations?provider_event_id=%C3%A9', 'provider_event_id'],
  ])('%s is a 400 naming %s', async (path, field) => {
    const res = await callAs(app, TEST_ADMIN_TOKEN, 'GET', path);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('validation_failed');
    expect(res.json.error.message).toContain(field);
  });
});

describe('C4 reconciliation search', () => {
  it('payment_reference and provider_event_id each find the one reconciliation', async () => {
    expect(await listed(`/reconciliations?provider=${provider}`)).toEqual([...reconIds].sort());
    expect(await listed(`/reconciliations?payment_reference=${refA}`)).toEqual([reconIds[0]]);
    expect(await listed(`/reconciliations?provider_event_id=evt_${tag}_1`)).toEqual([reconIds[1]]);
    expect(await listed(`/reconciliations?payment_reference=${refA}&provider_event_id=evt_${tag}_1`)).toEqual([]);
  });

  it('a merchant key still cannot list reconciliations', async () => {
    const res = await callAs(app, merchantA.token, 'GET', `/reconciliations?payment_reference=${refA}`);
    expect(res.status).toBe(403);
  });

  it('openapi.json documents the search parameters', async () => {
    const doc = (await callAs(app, undefined, 'GET', '/openapi.json')).json;
    const names = (path: string) => doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
    expect(names('/webhook-deliveries')).toEqual(expect.arrayContaining(['payment_reference', 'merchant_account', 'event_type']));
    expect(names('/reconciliations')).toEqual(expect.arrayContaining(['payment_reference', 'provider_event_id']));
  });
});
