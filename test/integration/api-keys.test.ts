// A1 API keys on the real PostgreSQL: shown once, stored as SHA-256 of the secret, created and revoked with time
// and author, a revoked or wrong key is a 401, the table accepts nothing but a revocation; the bootstrap
// ADMIN_TOKEN creates the first keys.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { eq, sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../../src/access/api-keys.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { apiKeys } from '../../src/db/schema/index.js';
import { REDACT_PATHS } from '../../src/lib/logger.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEMPORAL_ADDRESS, TEST_ADMIN_TOKEN, TEST_DATABASE_URL } from '../helpers/env.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let app: ReturnType<typeof testApp>;
const logLines: string[] = [];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  const sink = new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) });
  app = testApp({
    db: database.db,
    temporal: new Client({ connection: Connection.lazy({ address: TEMPORAL_ADDRESS }) }),
    taskQueues: uniqueTaskQueues('api-keys'),
    logger: pino({ level: 'debug', redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink),
  });
});
afterAll(async () => {
  await database?.close();
});

/** Every page of GET /api-keys, following next_cursor: the ids and the raw text of all pages. */
async function allKeys(token: string, includeRevoked = false) {
  let cursor: string | null = null;
  const ids: string[] = [];
  let text = '';
  do {
    const query: string = `/api-keys?include_revoked=${includeRevoked}&limit=100${cursor ? `&cursor=${cursor}` : ''}`;
    const p = await callAs(app, token, 'GET', query);
    expect(p.status).toBe(200);
    ids.push(...p.json.data.map((k: { id: string }) => k.id));
    expect(p.json.data.every((k: object) => !('token' in k) && !('secret_hash' in k))).toBe(true);
    text += p.text;
    cursor = p.json.next_cursor;
  } while (cursor);
  return { ids, text };
}

describe('A1 API keys', () => {
  it('A1 the token is shown once; only the SHA-256 of its secret is stored; lists and logs never carry it', async () => {
    const created = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', { name: 'alice', role: 'admin' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ object: 'api_key', name: 'alice', role: 'admin', merchant_account: null, created_by: 'bootstrap', revoked_at: null });
    const token: string = created.json.token;
    expect(token).toMatch(/^apk_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/);
    expect(token.startsWith(`${created.json.id}_`)).toBe(true);

    const [row] = await database.db.select().from(apiKeys).where(eq(apiKeys.id, created.json.id));
    const secret = parseApiKey(token)!.secret;
    expect(row!.secretHash.equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect(JSON.stringify(row)).not.toContain(secret);

    const list = await allKeys(TEST_ADMIN_TOKEN);
    expect(list.ids).toContain(created.json.id);
    expect(list.text).not.toContain(secret);
    expect(logLines.join('')).toContain(created.json.id);
    expect(logLines.join('')).not.toContain(secret);

    const asAlice = await callAs(app, token, 'GET', '/webhook-deliveries?limit=1');
    expect(asAlice.status).toBe(200);
  });

  it('A1 a key created by another key records that key as its author; revocation records time and author, stops the key at once, and is idempotent', async () => {
    const admin = await createKey(app, 'admin', undefined, 'root-2');
    const made = await callAs(app, admin.token, 'POST', '/api-keys', { name: 'shop', role: 'merchant', merchant_account: uniqueMerchant('keys') });
    expect(made.status).toBe(201);
    expect(made.json.created_by).toBe(admin.id);
    expect((await callAs(app, made.json.token, 'GET', '/webhook-endpoints')).status).toBe(200);

    const revoked = await callAs(app, admin.token, 'POST', `/api-keys/${made.json.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.revoked_by).toBe(admin.id);
    expect(Date.parse(revoked.json.revoked_at)).toBeGreaterThan(0);
    const refused = await callAs(app, made.json.token, 'GET', '/webhook-endpoints');
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('unauthorized');

    const again = await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/api-keys/${made.json.id}/revoke`);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ revoked_by: admin.id, revoked_at: revoked.json.revoked_at });

    expect((await allKeys(admin.token)).ids).not.toContain(made.json.id);
    expect((await allKeys(admin.token, true)).ids).toContain(made.json.id);
    expect((await callAs(app, admin.token, 'POST', '/api-keys/apk_00000000000000000000000000/revoke')).status).toBe(404);
  });

  it.each([
    ['an unknown key id', () => 'apk_00000000000000000000000000_' + 'A'.repeat(43)],
    ['a known id with a wrong secret', async () => `${(await createKey(app, 'viewer')).id}_${'B'.repeat(43)}`],
    ['a truncated key', async () => (await createKey(app, 'viewer')).token.slice(0, -1)],
    ['the bootstrap token with a suffix', () => `${TEST_ADMIN_TOKEN}x`],
  ])('A1 %s is a 401 that says nothing about why', async (_name, make) => {
    const res = await callAs(app, await make(), 'GET', '/webhook-endpoints');
    expect(res.status).toBe(401);
    expect(res.json.error.message).toBe('a valid bearer token (API key) is required');
  });

  it.each([
    ['merchant without merchant_account', { name: 'm', role: 'merchant' }, 'merchant_account'],
    ['a staff role with merchant_account', { name: 'v', role: 'viewer', merchant_account: 'acct_1' }, 'merchant_account'],
    ['an unknown role', { name: 'x', role: 'root' }, 'role'],
    ['an empty name', { name: ' ', role: 'viewer' }, 'name'],
  ])('A1 creating a key with %s is a 400 naming the field', async (_name, body, field) => {
    const res = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', body);
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain(field);
  });

  it('A1 a stored key accepts nothing but one revocation, not even from the owner role', async () => {
    const key = await createKey(app, 'viewer');
    const refusal = (p: Promise<unknown>) => p.then(() => 'accepted', (e: Error & { cause?: Error }) => (e.cause ?? e).message);
    expect(await refusal(database.db.execute(sql`update api_keys set role = 'admin' where id = ${key.id}`))).toMatch(/only be revoked/);
    expect(await refusal(database.db.execute(sql`delete from api_keys where id = ${key.id}`))).toMatch(/only be revoked/);
    expect(await refusal(database.db.execute(sql`update api_keys set revoked_at = now(), revoked_by = 'x' where id = ${key.id}`))).toBe('accepted');
    expect(await refusal(database.db.execute(sql`update api_keys set revoked_at = null, revoked_by = null where id = ${key.id}`))).toMatch(/only be revoked/);
  });
});
