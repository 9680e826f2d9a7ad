// A6 on the real PostgreSQL, connected as the application role the processes use: the registry, receipts, ledger
// and audit tables refuse UPDATE, DELETE and TRUNCATE by privilege (not only by trigger), the role cannot drop the
// guards or the tables, every table has a grant policy, and the API's own work still succeeds under that role.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { IMMUTABLE_TABLES, TABLE_GRANTS } from '../../src/db/grants.js';
import { buildPosting } from '../../src/ledger/postings.js';
import { postTransaction } from '../../src/ledger/store.js';
import { callAs } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEMPORAL_ADDRESS, TEST_ADMIN_TOKEN, TEST_APP_DATABASE_URL } from '../helpers/env.js';
import { inboundTestProfile, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { roleDatabases } from '../helpers/role-databases.js';

const { app, owner } = roleDatabases({ app: 2, owner: 1 });

/** The error message of a statement, or 'ok'. */
const attempt = (run: Promise<unknown>) => run.then(() => 'ok', (e: Error) => e.message);
const anyColumn: Record<string, string> = {
  provider_event_registry: 'registered_at',
  webhook_receipts: 'raw_body',
  ledger_transactions: 'description',
  ledger_entries: 'amount_minor',
  operator_resolutions: 'reason',
  reconciliation_transitions: 'reason',
  ledger_adjustments: 'reason',
  audit_events: 'action',
  principals: 'name', // A12
  api_keys: 'name', // A21: revoked through apipay_revoke_api_key only
  proposal_approvals: 'approver_name', // A27
};

describe('A6 the application role', () => {
  it('A6 connects as a role that is neither superuser nor owner of any table', async () => {
    const [me] = await app.sql`select current_user as name, rolsuper from pg_roles where rolname = current_user`;
    expect(me!.name).toBe(new URL(TEST_APP_DATABASE_URL).username);
    expect(me!.rolsuper).toBe(false);
    const owned = await app.sql`select tablename from pg_tables where schemaname = 'public' and tableowner = current_user`;
    expect(owned).toHaveLength(0);
  });

  it.each(IMMUTABLE_TABLES)('A6 %s refuses UPDATE, DELETE and TRUNCATE by privilege', async (table) => {
    const column = anyColumn[table]!;
    expect(await attempt(app.sql.unsafe(`update ${table} set ${column} = ${column} where false`))).toMatch(`permission denied for table ${table}`);
    expect(await attempt(app.sql.unsafe(`delete from ${table} where false`))).toMatch(`permission denied for table ${table}`);
    expect(await attempt(app.sql.unsafe(`truncate ${table}`))).toMatch(`permission denied for table ${table}`);
    expect(await attempt(app.sql.unsafe(`select count(*) from ${table}`))).toBe('ok');
  });

  it('A6 the application role cannot alter a ledger row it wrote itself, nor drop the guards', async () => {
    // A21: the role writes the ledger only through apipay_post_ledger_transaction (postTransaction calls it).
    const ref = `pi_a6_${randomUUID().slice(0, 8)}`;
    const posting = buildPosting({ kind: 'payment', provider: 'a6', providerEventId: `evt_${ref}`, paymentReference: ref, amountMinor: '100', currency: 'EUR' });
    const { transactionId: id } = await postTransaction(app.db, posting, { providerEventId: `evt_${ref}`, reconciliationId: 'none', effectiveAt: new Date().toISOString(), actor: 'system' });
    expect(await attempt(app.sql`update ledger_entries set amount_minor = 1 where transaction_id = ${id}`)).toMatch('permission denied');
    expect(await attempt(app.sql`delete from ledger_transactions where id = ${id}`)).toMatch('permission denied');
    const [still] = await app.sql`select sum(amount_minor) filter (where amount_minor > 0) as debit from ledger_entries where transaction_id = ${id}`;
    expect(String(still!.debit)).toBe('100');
    expect(await attempt(app.sql`drop trigger ledger_entries_append_only on ledger_entries`)).toMatch('must be owner');
    expect(await attempt(app.sql`alter table ledger_entries disable trigger all`)).toMatch('must be owner');
    expect(await attempt(app.sql`drop table ledger_entries`)).toMatch('must be owner');
  });

  it('A6 receipts: only the sweep marker may change; api keys: nothing directly (A21: revoked by a function)', async () => {
    expect(await attempt(app.sql`update webhook_receipts set workflow_started_at = now() where false`)).toBe('ok');
    expect(await attempt(app.sql`update api_keys set revoked_at = now(), revoked_by = 'x' where false`)).toMatch('permission denied');
    expect(await attempt(app.sql`update api_keys set role = 'admin' where false`)).toMatch('permission denied');
    expect(await attempt(app.sql`truncate api_keys`)).toMatch('permission denied');
  });

  it('A5 dual-control proposals: only their closing columns may be set, nothing deleted', async () => {
    for (const table of ['resolution_proposals', 'adjustment_proposals']) {
      expect(await attempt(app.sql`update ${app.sql(table)} set closed = 'cancelled', closed_by = 'x', closed_by_key = 'x', closed_at = now() where false`)).toBe('ok');
      expect(await attempt(app.sql`update ${app.sql(table)} set reason = 'changed' where false`)).toMatch('permission denied');
      expect(await attempt(app.sql`delete from ${app.sql(table)} where false`)).toMatch('permission denied');
      expect(await attempt(app.sql`truncate ${app.sql(table)}`)).toMatch('permission denied');
    }
  });

  it('A6 every table in the schema has a grant policy in src/db/grants.ts', async () => {
    const tables = (await owner.sql<{ tablename: string }[]>`select tablename from pg_tables where schemaname = 'public'`).map((r) => r.tablename);
    expect(tables.filter((t) => !(t in TABLE_GRANTS))).toEqual([]);
    expect(await attempt(app.sql`select count(*) from drizzle.__drizzle_migrations`)).toMatch('permission denied');
  });

  it('A6 the API does its work as the application role: keys, endpoints (create, rotate, delete), a provider webhook', async () => {
    const { profile, stripe } = inboundTestProfile('a6');
    const api = testApp({ db: app.db, temporal: new Client({ connection: Connection.lazy({ address: TEMPORAL_ADDRESS }) }), taskQueues: uniqueTaskQueues('a6'), profile, ingress: { starter: null } });
    const key = await callAs(api, TEST_ADMIN_TOKEN, 'POST', '/api-keys', { name: 'a6', role: 'admin' });
    expect(key.status).toBe(201);
    const endpoint = await callAs(api, key.json.token, 'POST', '/webhook-endpoints', { merchant_account: uniqueMerchant('a6'), url: 'http://127.0.0.1:4999/a6', event_types: ['*'], livemode: false });
    expect(endpoint.status).toBe(201);
    expect((await callAs(api, key.json.token, 'POST', `/webhook-endpoints/${endpoint.json.id}/secret/rotate`)).status).toBe(200);
    expect((await callAs(api, key.json.token, 'DELETE', `/webhook-endpoints/${endpoint.json.id}`)).status).toBe(204);
    expect((await callAs(api, TEST_ADMIN_TOKEN, 'POST', `/api-keys/${key.json.id}/revoke`)).status).toBe(200);
    const webhook = await api.request(`/webhooks/${stripe}`, stripeRequest(stripeEvent().body));
    expect(webhook.status).toBe(200);
    expect(await webhook.json()).toMatchObject({ received: true, duplicate: false });
  });
});
