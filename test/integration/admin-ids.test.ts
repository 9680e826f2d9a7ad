// A9 on the real PostgreSQL: authentication is decided by route (a path that merely ends in /openapi.json is not
// public), and every id and cursor the admin API hands out is accepted back, also ids with `+`, `/`, `=` and ids
// of 200 characters (provider event ids are any printable ASCII up to 200 characters).
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, events, reconciliations } from '../../src/db/schema/index.js';
import { newId, reconciliationWorkflowId } from '../../src/shared/ids.js';
import { testApp } from '../helpers/app.js';
import { TEMPORAL_ADDRESS, TEST_ADMIN_TOKEN, TEST_DATABASE_URL } from '../helpers/env.js';
import { insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let app: ReturnType<typeof testApp>;
const provider = `ids-${randomUUID().slice(0, 8)}`;
const long = (seed: string) => `${seed}+/=`.repeat(60).slice(0, 200);
const providerEventIds = ['a+b/c=d', 'evt/..%2F?#&=', long('x'), long('y'), 'plain_1'];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  const temporal = new Client({ connection: Connection.lazy({ address: TEMPORAL_ADDRESS }) });
  app = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('admin-ids') });
  const now = new Date();
  for (const id of providerEventIds) {
    await database.db.insert(reconciliations).values({
      id: reconciliationWorkflowId(provider, id),
      provider,
      providerEventId: id,
      eventType: 'payment.succeeded',
      paymentReference: `pi_${randomUUID().slice(0, 8)}`,
      amountMinor: 100n,
      currency: 'EUR',
      effectiveAt: now,
      state: 'manual_review',
      acknowledgedAt: now,
    });
  }
});
afterAll(async () => {
  await database?.close();
});

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
async function get(path: string, headers: Record<string, string> = auth) {
  const res = await app.request(`/admin/v1${path}`, { headers });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as any) : undefined };
}

describe('A9 authentication by route', () => {
  it.each(['/webhook-endpoints/openapi.json', '/reconciliations/openapi.json', '/no-such-route/openapi.json', '/openapi.json/x'])(
    'A9 %s without a token is a 401 (only the document itself is public)',
    async (path) => {
      const res = await get(path, {});
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('unauthorized');
    },
  );

  it('A9 the OpenAPI document itself needs no token', async () => {
    expect((await get('/openapi.json', {})).status).toBe(200);
  });
});

describe('A9 every id and cursor handed out is accepted back', () => {
  it('A9 reconciliation ids with +, /, = and 200 characters: paged with cursors, then fetched one by one', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?provider=${provider}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await get(`/reconciliations${query}`);
      expect(page.status).toBe(200);
      seen.push(...page.json.data.map((r: { id: string }) => r.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen.sort()).toEqual(providerEventIds.map((id) => reconciliationWorkflowId(provider, id)).sort());
    for (const id of seen) {
      const one = await get(`/reconciliations/${encodeURIComponent(id)}`);
      expect(one.status, id).toBe(200);
      expect(one.json.id).toBe(id);
    }
  });

  it('A9 an event id of 200 characters after evt_ and its delivery are fetched back', async () => {
    const account = uniqueMerchant('ids');
    const endpoint = await insertEndpoint(database.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/x' });
    const eventId = `evt_${randomUUID().replaceAll('-', '')}${'Z'.repeat(200)}`.slice(0, 204);
    await database.db.insert(events).values({ eventPublicId: eventId, merchantAccount: account, type: 'payment.succeeded', livemode: false, createdUnix: 1_780_000_000, body: Buffer.from('{}') });
    const deliveryId = newId('whd');
    await database.db.insert(deliveries).values({ id: deliveryId, eventPublicId: eventId, endpointId: endpoint.id, merchantAccount: account });
    const listed = await get(`/webhook-deliveries?event_id=${encodeURIComponent(eventId)}`);
    expect(listed.status).toBe(200);
    expect(listed.json.data[0].event_id).toBe(eventId);
    const event = await get(`/events/${encodeURIComponent(eventId)}`);
    expect(event.status).toBe(200);
    expect(event.json.id).toBe(eventId);
    expect((await get(`/webhook-deliveries/${deliveryId}`)).json.event_id).toBe(eventId);
  });

  it('A9 a cursor that is not one the API handed out is a 400 naming cursor', async () => {
    for (const bad of ['!!!', 'a b', `${Buffer.from('x').toString('base64url')}=`]) {
      const res = await get(`/reconciliations?cursor=${encodeURIComponent(bad)}`);
      expect(res.status).toBe(400);
      expect(res.json.error.message).toContain('cursor');
    }
  });
});
