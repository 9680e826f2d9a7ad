// A8 on the real PostgreSQL: endpoint secrets record the master key that sealed them and are bound to their
// endpoint; a new master key takes over while the previous one still decrypts; re-encryption moves every row to
// the current key, after which the previous key can go; rows from before key ids still open. M11: a broker
// destination's sealed credentials move with them.
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { endpointSecrets, webhookEndpoints } from '../../src/db/schema/index.js';
import { keyringFromEnv } from '../../src/shared/keyring.js';
import { encryptSecret, generateEndpointSecret, insertEndpointSecret, reencryptEndpointSecrets, rotateEndpointSecret, signingSecretsFor } from '../../src/outbound/secrets.js';
import { newId } from '../../src/shared/ids.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import { createEndpointService } from '../../src/outbound/endpoints.js';
import { openCredentials } from '../../src/outbound/destinations/credentials.js';
import { reencryptDestinationCredentials } from '../../src/outbound/destinations/reencrypt.js';

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

describe('A8 M11 master-key rotation of destination credentials', () => {
  const PASSWORD = 'rotated-broker-pw-0c2a';
  const sealedOf = async (id: string) => {
    const [row] = await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
    return { ciphertext: row!.destinationCredentials, keyId: row!.destinationCredentialsKeyId };
  };
  /** A RabbitMQ endpoint of a fresh merchant whose password is sealed under the `before` keys (k1). */
  const rabbitEndpoint = () =>
    createEndpointService({ db: database.db, secretsKey: before }).create(BOOTSTRAP_PRINCIPAL, {
      merchantAccount: `acct_${newId('we')}`,
      destination: { type: 'rabbitmq', fields: { host: '127.0.0.1', username: 'shop', password: PASSWORD, routing_key: 'q' } },
      eventTypes: ['*'],
      livemode: false,
    });

  it('A8 M11 reencrypt re-seals a RabbitMQ endpoint\'s password under the new key; with the old key removed it still opens and updates', async () => {
    const created = await rabbitEndpoint();
    const id = created.endpoint.id;
    const sealed = await sealedOf(id);
    expect(sealed.keyId).toBe('k1');
    expect(() => openCredentials(id, sealed, after)).toThrow(
      /sealed with master key k1, which is not configured/,
    );

    expect(await reencryptDestinationCredentials(database.db, during, { endpointIds: [id] })).toEqual({ reencrypted: 1, failed: 0 });
    expect(await reencryptDestinationCredentials(database.db, during, { endpointIds: [id] })).toEqual({ reencrypted: 0, failed: 0 });
    const moved = await sealedOf(id);
    expect(moved.keyId).toBe('k2');
    // After: the old key is gone; the credentials open (what the publisher does) and an update keeps the password.
    expect(openCredentials(id, moved, after)).toEqual({ password: PASSWORD });
    const service = createEndpointService({ db: database.db, secretsKey: after });
    await service.update(BOOTSTRAP_PRINCIPAL, id, { destinationFields: { routing_key: 'q2' } });
    expect(openCredentials(id, await sealedOf(id), after)).toEqual({ password: PASSWORD });
  });

  it('A8 M11 credentials no configured key opens are counted as failed and left as they are', async () => {
    const created = await rabbitEndpoint();
    const untouched = await sealedOf(created.endpoint.id);
    expect(await reencryptDestinationCredentials(database.db, after, { endpointIds: [created.endpoint.id] })).toEqual({ reencrypted: 0, failed: 1 });
    expect(await sealedOf(created.endpoint.id)).toEqual(untouched);
  });
});
