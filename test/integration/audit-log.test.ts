// A3 on the real PostgreSQL and Temporal dev server: every state-changing admin call on endpoints, deliveries, API
// keys and master keys writes exactly one audit row (actor, role, action, target, before/after, request id), never a
// secret, in the transaction of the change (a refused change writes none; a failing audit insert undoes the change),
// and the application role cannot alter, delete or truncate the log.
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { auditEvents, webhookEndpoints } from '../../src/db/schema/index.js';
import { callWithRequestId, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_APP_DATABASE_URL, TEST_DATABASE_URL } from '../helpers/env.js';
import { insertDelivery, uniqueMerchant } from '../helpers/outbound.js';
import { connectDevServer, uniqueTaskQueues, terminateWorkflows } from '../helpers/temporal.js';

let database: Database;
let appRole: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let api: ReturnType<typeof testApp>;
let admin: Caller;
let operator: Caller;
const started = new Set<string>();
const merchant = uniqueMerchant('audit');
const label = randomUUID().slice(0, 8);

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  appRole = createDatabase(TEST_APP_DATABASE_URL, { max: 2 });
  temporal = await connectDevServer();
  api = testApp({ db: appRole.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('audit-log') });
  admin = await createKey(api, 'admin', undefined, `audit-admin-${label}`);
  operator = await createKey(api, 'operator', undefined, `audit-operator-${label}`);
});
afterAll(async () => {
  await terminateWorkflows(temporal.client, started);
  await temporal?.close();
  await appRole?.close();
  await database?.close();
});

/** A request as `who`, with its own X-Request-Id, so the audit row can be matched to it. */
const call = (who: Caller, method: string, path: string, body?: unknown) => callWithRequestId(api, who, method, path, body);

const rowsOf = (targetId: string) =>
  database.db.select().from(auditEvents).where(eq(auditEvents.targetId, targetId)).orderBy(auditEvents.id);
// A24: the client's X-Request-Id is kept beside the server's request id (client_request_id), never as it.
const rowsOfRequest = (requestId: string) =>
  database.db.select().from(auditEvents).where(eq(auditEvents.clientRequestId, requestId));

/** Exactly one row for the request, by `who`, with this action and target. */
async function theRow(reply: { requestId: string }, who: Caller, action: string, target: { type: string; id: string }) {
  const rows = await rowsOfRequest(reply.requestId);
  expect(rows, action).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    actorKeyId: who.id,
    actorName: expect.stringContaining('audit-'),
    actorRole: who.role,
    action,
    targetType: target.type,
    targetId: target.id,
    via: 'api',
  });
  return rows[0]!;
}

describe('A3 every change to an endpoint writes one audit row', () => {
  it('A3 create, update, disable, enable, rotate, delete: actor, before and after, request id; never a secret', async () => {
    const created = await call(admin, 'POST', '/webhook-endpoints', {
      merchant_account: merchant,
      url: 'http://127.0.0.1:4999/a',
      event_types: ['*'],
      livemode: false,
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const target = { type: 'webhook_endpoint', id };
    const create = await theRow(created, admin, 'endpoint.create', target);
    expect(create.before).toBeNull();
    expect(create.after).toMatchObject({
      merchant_account: merchant,
      status: 'enabled',
      event_types: ['*'],
      url: 'http://127.0.0.1:4999/a',
    });

    const updated = await call(admin, 'PATCH', `/webhook-endpoints/${id}`, {
      description: 'new words',
      url: 'http://127.0.0.1:4999/b',
    });
    expect(updated.status).toBe(200);
    const update = await theRow(updated, admin, 'endpoint.update', target);
    expect(update.before).toMatchObject({ description: null, url: 'http://127.0.0.1:4999/a' });
    expect(update.after).toMatchObject({ description: 'new words', url: 'http://127.0.0.1:4999/b' });

    const disabled = await call(admin, 'POST', `/webhook-endpoints/${id}/disable`, { reason: 'merchant asked' });
    expect((await theRow(disabled, admin, 'endpoint.disable', target)).after).toMatchObject({
      status: 'disabled',
      disabled_reason: 'merchant asked',
    });
    const enabled = await call(admin, 'POST', `/webhook-endpoints/${id}/enable`);
    const enable = await theRow(enabled, admin, 'endpoint.enable', target);
    expect([enable.before!.status, enable.after!.status]).toEqual(['disabled', 'enabled']);

    const rotated = await call(admin, 'POST', `/webhook-endpoints/${id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const rotate = await theRow(rotated, admin, 'endpoint.rotate_secret', target);
    expect(rotate.after).toHaveProperty('previous_signs_until');

    const deleted = await call(admin, 'DELETE', `/webhook-endpoints/${id}`);
    expect(deleted.status).toBe(204);
    const remove = await theRow(deleted, admin, 'endpoint.delete', target);
    expect(remove.after).toMatchObject({ status: 'disabled', disabled_reason: 'deleted', deleted_at: expect.any(String) });

    const all = await rowsOf(id);
    expect(all.map((r) => r.action)).toEqual([
      'endpoint.create',
      'endpoint.update',
      'endpoint.disable',
      'endpoint.enable',
      'endpoint.rotate_secret',
      'endpoint.delete',
    ]);
    const stored = JSON.stringify(all);
    for (const secret of [created.json.secret, rotated.json.secret]) expect(stored).not.toContain(secret);
    expect(stored).not.toContain('whsec_');
  });

  it('A3 a refused change writes no row: 404, a bad body, a forbidden role, an unsafe URL', async () => {
    const created = await call(admin, 'POST', '/webhook-endpoints', {
      merchant_account: merchant,
      url: 'http://127.0.0.1:4999/r',
      event_types: ['*'],
      livemode: false,
    });
    const id = created.json.id as string;
    const refused = [
      await call(admin, 'PATCH', `/webhook-endpoints/we_${'0'.repeat(26)}`, { description: 'x' }),
      await call(admin, 'PATCH', `/webhook-endpoints/${id}`, { colour: 'red' }),
      await call(operator, 'POST', `/webhook-endpoints/${id}/disable`, { reason: 'not mine to do' }),
      await call(admin, 'PATCH', `/webhook-endpoints/${id}`, { url: 'ftp://example.com/x' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([404, 400, 403, 400]);
    for (const r of refused) expect(await rowsOfRequest(r.requestId)).toEqual([]);
    expect((await rowsOf(id)).map((r) => r.action)).toEqual(['endpoint.create']);
  });

  it('A3 same transaction: when the audit row cannot be written, the change is not made either', async () => {
    const created = await call(admin, 'POST', '/webhook-endpoints', {
      merchant_account: merchant,
      url: 'http://127.0.0.1:4999/t',
      event_types: ['*'],
      livemode: false,
    });
    const id = created.json.id as string;
    const fn = `audit_refuse_${label}`;
    // Owner-only test hook: the audit insert of this one endpoint's update fails, inside the change's transaction.
    await database.db.execute(
      sql.raw(
        `create function ${fn}() returns trigger language plpgsql set search_path = pg_catalog, public, pg_temp as $$ begin if new.target_id = '${id}' and new.action = 'endpoint.update' then raise exception 'audit refused for the test'; end if; return new; end $$`,
      ),
    );
    await database.db.execute(
      sql.raw(`create trigger ${fn} before insert on audit_events for each row execute function ${fn}()`),
    );
    try {
      const failed = await call(admin, 'PATCH', `/webhook-endpoints/${id}`, { description: 'must not stick' });
      expect(failed.status).toBe(500);
    } finally {
      await database.db.execute(sql.raw(`drop trigger ${fn} on audit_events`));
      await database.db.execute(sql.raw(`drop function ${fn}()`));
    }
    const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    expect(row!.description).toBeNull();
    expect((await rowsOf(id)).map((r) => r.action)).toEqual(['endpoint.create']);
  });
});

describe('A3 deliveries, API keys and master keys', () => {
  it('A3 a retry and a recovery each write one row; a refused retry (already delivered) writes none', async () => {
    const created = await call(admin, 'POST', '/webhook-endpoints', {
      merchant_account: merchant,
      url: 'http://127.0.0.1:4999/d',
      event_types: ['*'],
      livemode: false,
    });
    const endpointId = created.json.id as string;
    const failed = (await insertDelivery(database.db, { endpointId, merchantAccount: merchant })).deliveryId;
    await database.db.execute(sql`update deliveries set status = 'FAILED', failed_at = now() where id = ${failed}`);
    started.add(failed);
    const retried = await call(operator, 'POST', `/webhook-deliveries/${failed}/retry`, { reason: 'merchant fixed it' });
    expect(retried.status).toBe(202);
    const retry = await theRow(retried, operator, 'delivery.retry', { type: 'webhook_delivery', id: failed });
    expect([retry.before, retry.after]).toEqual([{ status: 'FAILED' }, { status: 'PENDING', reason: 'merchant fixed it' }]);

    const delivered = (await insertDelivery(database.db, { endpointId, merchantAccount: merchant })).deliveryId;
    await database.db.execute(sql`update deliveries set status = 'DELIVERED' where id = ${delivered}`);
    const refused = await call(operator, 'POST', `/webhook-deliveries/${delivered}/retry`);
    expect(refused.status).toBe(409);
    expect(await rowsOf(delivered)).toEqual([]);

    const again = (await insertDelivery(database.db, { endpointId, merchantAccount: merchant })).deliveryId;
    await database.db.execute(sql`update deliveries set status = 'FAILED', failed_at = now() where id = ${again}`);
    started.add(again);
    const recovered = await call(operator, 'POST', `/webhook-endpoints/${endpointId}/recover`, {
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(recovered.status).toBe(202);
    const recover = await theRow(recovered, operator, 'endpoint.recover', { type: 'webhook_endpoint', id: endpointId });
    expect(recover.after).toMatchObject({ requeued: 1, delivery_ids: [again] });
  });

  it('A3 API key create and revoke: one row each, never the token or its hash; revoking again writes nothing', async () => {
    const made = await call(admin, 'POST', '/api-keys', { name: `audit-made-${label}`, role: 'viewer' });
    expect(made.status).toBe(201);
    const target = { type: 'api_key', id: made.json.id as string };
    const create = await theRow(made, admin, 'api_key.create', target);
    expect(create.after).toEqual({
      name: `audit-made-${label}`,
      role: 'viewer',
      merchant_account: null,
      created_by: admin.id,
      principal_id: made.json.principal_id,
      revoked_at: null,
      revoked_by: null,
      person: `audit-made-${label}`, // A12: the key's person, created with it (named after the key)
      person_kind: 'human',
      person_created: true,
    });
    const secretPart = (made.json.token as string).slice(target.id.length + 1);
    expect(JSON.stringify(create)).not.toContain(secretPart);

    const revoked = await call(admin, 'POST', `/api-keys/${target.id}/revoke`);
    expect((await theRow(revoked, admin, 'api_key.revoke', target)).after).toMatchObject({
      revoked_by: admin.id,
      revoked_at: expect.any(String),
    });
    const twice = await call(admin, 'POST', `/api-keys/${target.id}/revoke`);
    expect(twice.status).toBe(200);
    expect(await rowsOfRequest(twice.requestId)).toEqual([]);
  });

  it('A3 secrets reencrypt writes one row with its counts', async () => {
    const ran = await call(admin, 'POST', '/secrets/reencrypt');
    expect(ran.status).toBe(200);
    const row = await theRow(ran, admin, 'secrets.reencrypt', { type: 'master_key', id: ran.json.key_id });
    expect(row.after).toEqual({ reencrypted: ran.json.reencrypted, failed: ran.json.failed });
  });
});

describe('A3 the audit log is immutable', () => {
  const attempt = (run: Promise<unknown>) =>
    run.then(
      () => 'ok',
      (e: Error) => e.message,
    );

  it('A3 the application role may insert and read, but never update, delete or truncate a row; the owner is stopped by the trigger', async () => {
    const [row] = await appRole.db.select().from(auditEvents).where(eq(auditEvents.actorKeyId, admin.id)).limit(1);
    expect(row).toBeDefined();
    expect(await attempt(appRole.sql`update audit_events set actor_name = 'someone else' where id = ${row!.id}`)).toMatch(
      'permission denied for table audit_events',
    );
    expect(await attempt(appRole.sql`delete from audit_events where id = ${row!.id}`)).toMatch(
      'permission denied for table audit_events',
    );
    expect(await attempt(appRole.sql`truncate audit_events`)).toMatch('permission denied for table audit_events');
    expect(await attempt(appRole.sql`alter table audit_events disable trigger all`)).toMatch('must be owner');
    expect(await attempt(database.sql`update audit_events set actor_name = 'someone else' where id = ${row!.id}`)).toMatch(
      'append-only',
    );
    expect(await attempt(database.sql`delete from audit_events where id = ${row!.id}`)).toMatch('append-only');
    const [still] = await database.db.select().from(auditEvents).where(eq(auditEvents.id, row!.id));
    expect(still!.actorName).toBe(row!.actorName);
  });
});
