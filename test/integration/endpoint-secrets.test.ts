// O9 on the real database: rotation makes the new secret active, the previous one signs until the grace ends.
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { endpointSecrets, webhookEndpoints } from '../../src/db/schema/index.js';
import { generateEndpointSecret, insertEndpointSecret, rotateEndpointSecret, signingSecretsFor } from '../../src/outbound/secrets.js';
import { newId } from '../../src/shared/ids.js';
import { TEST_SECRETS_KEY } from '../helpers/env.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
const world = useWorld({ label: 'endpoint-secrets' });
beforeAll(() => {
  database = world.database;
});

async function endpointWithSecret(): Promise<{ id: string; secret: string }> {
  const id = newId('we');
  await database.db.insert(webhookEndpoints).values({ id, merchantAccount: `acct_${id}`, url: 'https://93.184.216.34/h', eventTypes: ['*'], livemode: false });
  const secret = generateEndpointSecret();
  await insertEndpointSecret(database.db, id, secret, TEST_SECRETS_KEY);
  return { id, secret };
}

describe('endpoint secrets in PostgreSQL (O9)', () => {
  it('O9 the stored row is ciphertext, not the secret', async () => {
    const { id, secret } = await endpointWithSecret();
    const rows = await database.db.select().from(endpointSecrets).where(eq(endpointSecrets.endpointId, id));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.ciphertext.toString('latin1')).not.toContain(secret.slice(6, 20));
    expect(await signingSecretsFor(database.db, id, TEST_SECRETS_KEY, new Date())).toEqual([secret]);
  });

  it('O9 after rotation: new active first, previous still signs inside the grace period, gone after it', async () => {
    const { id, secret: first } = await endpointWithSecret();
    const now = new Date();
    const grace = 24 * 3600_000;
    const second = await rotateEndpointSecret(database.db, id, TEST_SECRETS_KEY, grace, now);
    expect(second).not.toBe(first);
    expect(await signingSecretsFor(database.db, id, TEST_SECRETS_KEY, now)).toEqual([second, first]);
    expect(await signingSecretsFor(database.db, id, TEST_SECRETS_KEY, new Date(now.getTime() + grace - 1000))).toEqual([second, first]);
    expect(await signingSecretsFor(database.db, id, TEST_SECRETS_KEY, new Date(now.getTime() + grace + 1000))).toEqual([second]);

    // A second rotation inside the grace: the first keeps its own expiry, the second starts one.
    const later = new Date(now.getTime() + 3600_000);
    const third = await rotateEndpointSecret(database.db, id, TEST_SECRETS_KEY, grace, later);
    expect(await signingSecretsFor(database.db, id, TEST_SECRETS_KEY, later)).toEqual([third, second, first]);
    expect(await signingSecretsFor(database.db, id, TEST_SECRETS_KEY, new Date(now.getTime() + grace + 1000))).toEqual([third, second]);
  });

  it('O9 rotating an unknown endpoint fails and stores nothing', async () => {
    const id = newId('we');
    await expect(rotateEndpointSecret(database.db, id, TEST_SECRETS_KEY, 1000, new Date())).rejects.toThrow(/does not exist/);
    expect(await database.db.select().from(endpointSecrets).where(eq(endpointSecrets.endpointId, id))).toHaveLength(0);
  });
});
