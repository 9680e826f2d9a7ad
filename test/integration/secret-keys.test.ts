// A8 on the real PostgreSQL: endpoint secrets record the master key that sealed them and are bound to their
// endpoint; a new master key takes over while the previous one still decrypts; re-encryption moves every row to
// the current key, after which the previous key can go; rows from before key ids still open.
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { endpointSecrets, webhookEndpoints } from '../../src/db/schema/index.js';
import { keyringFromEnv } from '../../src/shared/keyring.js';
import { encryptSecret, generateEndpointSecret, insertEndpointSecret, reencryptEndpointSecrets, rotateEndpointSecret, signingSecretsFor } from '../../src/outbound/secrets.js';
import { newId } from '../../src/shared/ids.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';

let database: Database;
beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
});
afterAll(() => database.close());

const OLD = Buffer.alloc(32, 21).toString('base64');
const NEW = Buffer.alloc(32, 42).toString('base64');
const before = keyringFromEnv({ SECRETS_ENCRYPTION_KEY: OLD, SECRETS_ENCRYPTION_KEY_ID: 'k1' });
const during = keyringFromEnv({ SECRETS_ENCRYPTION_KEY: NEW, SECRETS_ENCRYPTION_KEY_ID: 'k2', SECRETS_ENCRYPTION_PREVIOUS_KEYS: `k1:${OLD}` });
const after = keyringFromEnv({ SECRETS_ENCRYPTION_KEY: NEW, SECRETS_ENCRYPTION_KEY_ID: 'k2' });

async function endpoint(): Promise<string> {
  const id = newId('we');
  await database.db.insert(webhookEndpoints).values({ id, merchantAccount: `acct_${id}`, url: 'https://93.184.216.34/h', eventTypes: ['*'], livemode: false });
  return id;
}
const keyIdsOf = async (ids: string[]) => (await database.db.select({ keyId: endpointSecrets.keyId }).from(endpointSecrets).where(inArray(endpointSecrets.endpointId, ids))).map((r) => r.keyId);

describe('A8 master keys of endpoint secrets', () => {
  it('A8 rotation of the master key: old rows open during it, reencrypt moves them, then the old key can go', async () => {
    const a = await endpoint();
    const b = await endpoint();
    const secretA = generateEndpointSecret();
    await insertEndpointSecret(database.db, a, secretA, before);
    // A row from before key ids: no key id, no associated data.
    const legacy = generateEndpointSecret();
    await database.db.insert(endpointSecrets).values({ endpointId: b, ciphertext: encryptSecret(legacy, Buffer.from(OLD, 'base64')), keyId: null });
    expect(await keyIdsOf([a, b])).toEqual(expect.arrayContaining(['k1', null]));

    // During: the new key seals, the old one still opens.
    const rotated = await rotateEndpointSecret(database.db, a, during, 3_600_000, new Date());
    expect(await signingSecretsFor(database.db, a, during, new Date())).toEqual([rotated, secretA]);
    expect(await signingSecretsFor(database.db, b, during, new Date())).toEqual([legacy]);
    await expect(signingSecretsFor(database.db, a, after, new Date())).rejects.toThrow(/master key k1, which is not configured/);

    expect(await reencryptEndpointSecrets(database.db, during, { endpointIds: [a, b] })).toEqual({ reencrypted: 2, failed: 0 });
    expect(await keyIdsOf([a, b])).toEqual(['k2', 'k2', 'k2']);
    expect(await reencryptEndpointSecrets(database.db, during, { endpointIds: [a, b] })).toEqual({ reencrypted: 0, failed: 0 });
    // After: the old key is gone and everything still opens.
    expect(await signingSecretsFor(database.db, a, after, new Date())).toEqual([rotated, secretA]);
    expect(await signingSecretsFor(database.db, b, after, new Date())).toEqual([legacy]);
  });

  it('A8 a sealed secret is bound to its endpoint: copied to another endpoint it does not open', async () => {
    const a = await endpoint();
    const b = await endpoint();
    await insertEndpointSecret(database.db, a, generateEndpointSecret(), after);
    const [row] = await database.db.select().from(endpointSecrets).where(eq(endpointSecrets.endpointId, a));
    await database.db.insert(endpointSecrets).values({ endpointId: b, ciphertext: row!.ciphertext, keyId: row!.keyId });
    await expect(signingSecretsFor(database.db, b, after, new Date())).rejects.toThrow();
    // Reencrypt reports it instead of stopping.
    const other = keyringFromEnv({ SECRETS_ENCRYPTION_KEY: OLD, SECRETS_ENCRYPTION_KEY_ID: 'k9', SECRETS_ENCRYPTION_PREVIOUS_KEYS: `k2:${NEW}` });
    expect(await reencryptEndpointSecrets(database.db, other, { endpointIds: [a, b] })).toEqual({ reencrypted: 1, failed: 1 });
  });
});
