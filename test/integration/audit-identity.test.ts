// A2 and A3 on the real PostgreSQL and Temporal dev server with a worker: the operator of a resolution and of a
// ledger adjustment is the API key, whatever the body says (another name is refused, nothing written); the
// resolution's audit row is written by the workflow's activity in the ledger's transaction with the key and the
// request id the API passed; a signal sent to the workflow directly is marked via temporal; and the audit list
// filters, pages, sorts and exports as CSV for viewers, not merchants.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { auditEvents, ledgerTransactions, operatorResolutions } from '../../src/db/schema/index.js';
import { operatorResolutionSignal } from '../../src/shared/inbound.js';
import { callWithRequestId, createKey, type Caller } from '../helpers/access.js';
import { useReviewWorld } from '../helpers/review-world.js';
import { testApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { waitFor } from '../helpers/reconciliation.js';
import { handleAs } from '../helpers/temporal.js';
import { type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
let api: ReturnType<typeof testApp>;
let provider: string;
const alice = `alice-${randomUUID().slice(0, 8)}`;
const callers = {} as Record<'alice' | 'bob' | 'viewer' | 'merchant' | 'admin', Caller>;

const review = useReviewWorld({ label: 'audit-identity' });
beforeAll(async () => {
  database = review.world.database;
  temporal = review.world.temporal;
  provider = review.provider;
  api = review.app;
  callers.alice = await createKey(api, 'operator', undefined, alice);
  callers.bob = await createKey(api, 'operator', undefined, `bob-${alice}`);
  callers.viewer = await createKey(api, 'viewer', undefined, `viewer-${alice}`);
  callers.admin = await createKey(api, 'admin', undefined, `admin-${alice}`);
  callers.merchant = await createKey(api, 'merchant', uniqueMerchant('audit-id'));
});

const call = (who: Caller, method: string, path: string, body?: unknown) => callWithRequestId(api, who, method, path, body);
const resolution = (id: string) => `/reconciliations/${encodeURIComponent(id)}/resolution`;
const auditOf = (targetId: string) => database.db.select().from(auditEvents).where(eq(auditEvents.targetId, targetId));

/** A payment the provider reports with another amount: it parks in manual_review. */
const parked = (amountMinor: string) => review.parked(amountMinor);

describe('A2 the operator is the credential', () => {
  it('A2 a resolution by key alice is recorded as alice whatever the body says; claiming another name is refused and writes nothing', async () => {
    const r = await parked('2500');
    const claimed = await call(callers.alice, 'POST', resolution(r.id), {
      decision: 'applied',
      operator: 'cfo',
      reason: 'I am the cfo',
      post: 'webhook',
    });
    expect(claimed.status).toBe(403);
    expect(claimed.json.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('operator') });
    expect(await auditOf(r.id)).toEqual([]);
    expect(await database.db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, r.id))).toEqual(
      [],
    );

    const done = await call(callers.alice, 'POST', resolution(r.id), {
      decision: 'applied',
      reason: 'checked with the provider',
      post: 'webhook',
    });
    expect(done.status).toBe(200);
    expect(done.json.resolution.operator).toBe(alice);
    const [row] = await auditOf(r.id);
    expect(row).toMatchObject({
      actorKeyId: callers.alice.id,
      actorName: alice,
      actorRole: 'operator',
      action: 'reconciliation.resolve',
      targetType: 'reconciliation',
      requestId: done.serverRequestId, // A24: the server's; the client's is beside it
      clientRequestId: done.requestId,
      via: 'api',
      before: { state: 'manual_review' },
      after: {
        state: 'applied',
        decision: 'applied',
        resolution_id: done.json.resolution.id,
        ledger_transaction_id: done.json.ledger_transaction_id,
        posted_amount_minor: '2500',
      },
    });
    // The ledger posting it made names the same operator: one transaction wrote both.
    const [posted] = await database.db
      .select()
      .from(ledgerTransactions)
      .where(eq(ledgerTransactions.id, done.json.ledger_transaction_id));
    expect(posted!.metadata).toMatchObject({ actor: `operator:${alice}` });
    expect(await auditOf(r.id)).toHaveLength(1);
  });

  it("A2 a body operator equal to the key's own name or id is accepted; a ledger adjustment is alice's too, audited once", async () => {
    const r = await parked('1800');
    const own = await call(callers.alice, 'POST', resolution(r.id), {
      decision: 'applied',
      operator: callers.alice.id,
      reason: 'ok',
      post: 'webhook',
    });
    expect(own.status).toBe(200);
    expect(own.json.resolution.operator).toBe(alice);

    const body = {
      provider,
      payment_reference: r.event.paymentReference,
      amount_minor: '-300',
      currency: r.event.currency,
      reason: 'fee refunded',
      idempotency_key: `adj-${randomUUID()}`,
    };
    const other = await call(callers.alice, 'POST', '/ledger/adjustments', { ...body, operator: 'cfo' });
    expect(other.status).toBe(403);
    const adjusted = await call(callers.alice, 'POST', '/ledger/adjustments', body);
    expect(adjusted.status).toBe(201);
    expect(adjusted.json.operator).toBe(alice);
    const [row, ...more] = await auditOf(adjusted.json.id);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      actorKeyId: callers.alice.id,
      action: 'ledger.adjust',
      requestId: adjusted.serverRequestId, // A24
      clientRequestId: adjusted.requestId,
      after: { amount_minor: '-300', ledger_transaction_id: adjusted.json.ledger_transaction_id },
    });
    const replay = await call(callers.alice, 'POST', '/ledger/adjustments', body);
    expect(replay.status).toBe(200);
    expect(await auditOf(adjusted.json.id)).toHaveLength(1);
  });

  it('A3/A4 a resolution signalled to the workflow directly (Temporal UI) is audited via temporal, as the identity that sent it', async () => {
    const r = await parked('900');
    // A4: the identity Temporal recorded for the signal, not the operator text typed into it.
    await handleAs(temporal.connection, 'someone-in-the-ui', r.handle.workflowId).signal(operatorResolutionSignal, {
      decision: 'rejected',
      operator: 'cfo',
      reason: 'duplicate',
    });
    await waitFor(async () => (await auditOf(r.id)).length > 0, 30_000, 'audit row');
    expect(await auditOf(r.id)).toEqual([
      expect.objectContaining({
        actorKeyId: 'temporal:someone-in-the-ui',
        actorName: 'someone-in-the-ui',
        actorRole: null,
        via: 'temporal',
        action: 'reconciliation.resolve',
      }),
    ]);
  });
});

describe('A3 GET /audit-events', () => {
  it('A3 filters by actor (key id or name), action and target; pages with a cursor either way; refuses unknown parameters', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push((await call(callers.admin, 'POST', '/api-keys', { name: `listed-${i}-${alice}`, role: 'viewer' })).json.id);
    await call(callers.admin, 'POST', `/api-keys/${made[0]}/revoke`);
    const mine = `/audit-events?actor=${callers.admin.id}`;
    const all = await call(callers.viewer, 'GET', `${mine}&limit=100`);
    expect(all.status).toBe(200);
    expect(all.json.data.map((e: { action: string }) => e.action)).toEqual([
      'api_key.create',
      'api_key.create',
      'api_key.create',
      'api_key.revoke',
    ]);
    expect(all.json.data[0]).toMatchObject({
      object: 'audit_event',
      actor: { key_id: callers.admin.id, name: `admin-${alice}`, role: 'admin' },
      target: { type: 'api_key', id: made[0] },
      before: null,
      via: 'api',
    });
    expect((await call(callers.viewer, 'GET', `/audit-events?actor=admin-${alice}&limit=100`)).json.data).toHaveLength(4);
    expect(
      (await call(callers.viewer, 'GET', `${mine}&action=api_key.revoke`)).json.data.map(
        (e: { target: { id: string } }) => e.target.id,
      ),
    ).toEqual([made[0]]);
    expect((await call(callers.viewer, 'GET', `/audit-events?target_type=api_key&target_id=${made[1]}`)).json.data).toHaveLength(
      1,
    );

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(callers.viewer, 'GET', `${mine}&order=desc&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.json.data.map((e: { id: string }) => e.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.json.data.map((e: { id: string }) => e.id).reverse());
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await call(callers.viewer, 'GET', `${mine}&from=${encodeURIComponent(future)}`)).json.data).toEqual([]);
    expect((await call(callers.viewer, 'GET', `${mine}&to=${encodeURIComponent(future)}&limit=100`)).json.data).toHaveLength(4);

    expect((await call(callers.viewer, 'GET', '/audit-events?who=alice')).status).toBe(400);
    expect((await call(callers.viewer, 'GET', '/audit-events?cursor=%%%')).status).toBe(400);
    expect((await call(callers.viewer, 'GET', '/audit-events?order=sideways')).status).toBe(400);
    expect((await call(callers.merchant, 'GET', '/audit-events')).status).toBe(403);
  });

  it('A3 the CSV holds the same rows, before and after as JSON text', async () => {
    const csv = await call(callers.viewer, 'GET', `/audit-events.csv?actor=${callers.admin.id}&action=api_key.revoke`);
    expect(csv.status).toBe(200);
    const [header, ...lines] = parseCsv(csv.text);
    expect(header).toEqual([
      'id',
      'at',
      'actor_key_id',
      'actor_name',
      'actor_role',
      'action',
      'target_type',
      'target_id',
      'before',
      'after',
      'request_id',
      'via',
    ]);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]![header!.indexOf('after')]!)).toMatchObject({ revoked_by: callers.admin.id });
    expect((await call(callers.viewer, 'GET', '/audit-events.csv?limit=5')).status).toBe(400);
  });
});
