// C9, C4: every admin list takes order/from/to beside cursor/limit, dates as 2026-12-01 or full ISO; an unknown
// query parameter is a 400 naming it; the OpenAPI viewer at /admin/v1/docs is self-contained. Real PostgreSQL.
import { randomUUID } from 'node:crypto';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { reconciliations, webhookEndpoints } from '../../src/db/schema/index.js';
import { newId } from '../../src/shared/ids.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let app: ReturnType<typeof testApp>;
const provider = `listq-${randomUUID().slice(0, 8)}`;
const account = `acct_listq_${randomUUID().slice(0, 8)}`;
// Three of each, a day apart (2026-11-01, -02, -03), inserted out of time order.
const days = ['2026-11-02', '2026-11-03', '2026-11-01'];
const reconIds = days.map((d, i) => `reconcile:${provider}:evt_${'zya'[i]}`);
const endpointIds: string[] = [];

const world = useWorld({ label: 'admin-list-query' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('listq') });
  const at = (d: string) => new Date(`${d}T12:00:00.123456Z`);
  await database.db.insert(reconciliations).values(
    days.map((d, i) => ({
      id: reconIds[i]!,
      provider,
      providerEventId: `evt_${'zya'[i]}`,
      eventType: 'payment.succeeded',
      paymentReference: `pi_${i}`,
      amountMinor: 100n,
      currency: 'EUR',
      effectiveAt: at(d),
      state: 'manual_review',
      acknowledgedAt: at(d),
      createdAt: at(d),
      updatedAt: at(d),
    })),
  );
  for (const d of ['2026-11-01', '2026-11-02', '2026-11-03']) {
    // The endpoint list orders by id; a ULID orders by its millisecond only, so each is made in a millisecond of its own.
    await new Promise((resolve) => setTimeout(resolve, 2));
    const id = newId('we');
    endpointIds.push(id);
    await database.db
      .insert(webhookEndpoints)
      .values({
        id,
        merchantAccount: account,
        url: 'http://127.0.0.1:4999/h',
        eventTypes: ['*'],
        livemode: false,
        createdAt: at(d),
        updatedAt: at(d),
      });
  }
});
afterAll(async () => {
  await database?.db.delete(reconciliations).where(inArray(reconciliations.id, reconIds));
});

async function get(path: string, headers: Record<string, string> = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }) {
  const res = await app.request(`/admin/v1${path}`, { headers });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as any) : undefined,
  };
}
const ids = (r: { json: { data: Array<{ id: string }> } }) => r.json.data.map((x) => x.id);

describe('C9 list order and time window', () => {
  it('reconciliations: oldest first by creation time, newest first with order=desc, paged without repeats', async () => {
    const byTime = [reconIds[2], reconIds[0], reconIds[1]];
    expect(ids(await get(`/reconciliations?provider=${provider}`))).toEqual(byTime);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await get(`/reconciliations?provider=${provider}&order=desc&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...ids(res));
      cursor = res.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...byTime].reverse());
  });

  it('from (inclusive) and to (exclusive) take a plain date or a full ISO date-time', async () => {
    expect(ids(await get(`/reconciliations?provider=${provider}&from=2026-11-02&to=2026-11-03`))).toEqual([reconIds[0]]);
    expect(ids(await get(`/reconciliations?provider=${provider}&from=2026-11-02T12:00:01%2B00:00`))).toEqual([reconIds[1]]);
    expect(ids(await get(`/webhook-endpoints?merchant_account=${account}&order=desc`))).toEqual([...endpointIds].reverse());
    expect(ids(await get(`/webhook-endpoints?merchant_account=${account}&to=2026-11-02`))).toEqual([endpointIds[0]]);
    expect((await get(`/webhook-deliveries?from=2026-11-02&to=2026-11-01&order=desc`)).json.data).toEqual([]);
  });

  it.each([
    ['/reconciliations?from=2026-13-01', 'from'],
    ['/reconciliations?from=2026-02-30', 'from'],
    ['/webhook-deliveries?to=yesterday', 'to'],
    ['/webhook-endpoints?order=newest', 'order'],
  ])('%s is a 400 naming %s', async (path, field) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('validation_failed');
    expect(res.json.error.message).toContain(field);
  });
});

describe('C4 unknown query parameters are refused, never ignored', () => {
  it.each([
    '/reconciliations?payment_ref=pi_1',
    '/webhook-deliveries?stauts=FAILED',
    '/webhook-endpoints?merchant=acct_1',
    '/exports/ledger.csv?form=2026-11-01',
    '/ledger/check?provder=x',
  ])('%s is a 400 naming the parameter', async (path) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('validation_failed');
    expect(res.json.error.message).toContain(new URL(path, 'http://x').searchParams.keys().next().value);
  });
});

describe('C9 OpenAPI viewer', () => {
  it('GET /admin/v1/docs is a self-contained page (no token, nothing from another origin) that reads openapi.json', async () => {
    const res = await get('/docs', {});
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.text).toContain("fetch('openapi.json')");
    expect(res.text).not.toMatch(/<(script|link)[^>]+(src|href)=/i);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
  });

  it('openapi.json documents order, from and to on the lists', async () => {
    const doc = (await get('/openapi.json', {})).json;
    for (const path of ['/reconciliations', '/webhook-deliveries', '/webhook-endpoints']) {
      const names = doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
      expect(names).toEqual(expect.arrayContaining(['order', 'from', 'to', 'limit', 'cursor']));
    }
  });
});
