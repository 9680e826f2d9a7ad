// P14 with O9/O16/O17: the batched first attempts look up the signing material of a chunk's endpoints in one query
// (src/outbound/signing-materials.ts). For any set of endpoints it must give exactly what the per-attempt lookup
// (signingMaterialFor) gives each: the scheme, whsec_ secrets active first then those in their grace period, whsk_
// keys only for a standard endpoint with a key, nothing for an expired secret or an unknown endpoint, and an error
// (not a wrong secret) for a secret no configured master key opens. Real PostgreSQL; fast-check picks the sets.
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { endpointSecrets } from '../../src/db/schema/index.js';
import { createEndpointService } from '../../src/outbound/endpoints.js';
import { signingMaterialFor } from '../../src/outbound/signature-headers.js';
import { signingMaterialsFor } from '../../src/outbound/signing-materials.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { uniqueMerchant } from '../helpers/outbound.js';

let database: Database;
const ids: string[] = [];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  const endpoints = createEndpointService({ db: database.db, secretsKey: TEST_SECRETS_KEY });
  const create = async (input: { signatureScheme?: 'apipay' | 'standard'; ed25519?: boolean }) => {
    const { endpoint } = await endpoints.create(BOOTSTRAP_PRINCIPAL, {
      merchantAccount: uniqueMerchant('signing'),
      url: 'https://merchant.example/hook',
      eventTypes: ['*'],
      livemode: false,
      ...input,
    });
    ids.push(endpoint.id);
    return endpoint.id;
  };
  const rotated = await create({}); // two whsec_ secrets in use: the new one first
  await endpoints.rotateSecret(BOOTSTRAP_PRINCIPAL, rotated, 3_600_000);
  const standardWithKey = await create({ signatureScheme: 'standard', ed25519: true });
  await endpoints.rotateSecret(BOOTSTRAP_PRINCIPAL, standardWithKey, 3_600_000);
  await create({ signatureScheme: 'standard' });
  const expired = await create({});
  await database.db
    .update(endpointSecrets)
    .set({ expiresAt: new Date(Date.now() - 1000) })
    .where(eq(endpointSecrets.endpointId, expired));
  const unopenable = await create({});
  await database.db.update(endpointSecrets).set({ keyId: 'not-configured' }).where(eq(endpointSecrets.endpointId, unopenable));
  ids.push('we_unknown_endpoint');
});

afterAll(async () => {
  await database?.close();
});

describe('P14 signingMaterialsFor', () => {
  it('gives every endpoint of any set what signingMaterialFor gives it alone', async () => {
    await fc.assert(
      fc.asyncProperty(fc.subarray(ids, { minLength: 1 }), fc.boolean(), async (picked, reversed) => {
        const at = new Date();
        const order = reversed ? [...picked].reverse() : picked;
        const batch = await signingMaterialsFor(database.db, order, TEST_SECRETS_KEY, at);
        expect([...batch.keys()].sort()).toEqual([...picked].sort());
        for (const id of picked) {
          const alone = await signingMaterialFor(database.db, id, TEST_SECRETS_KEY, at).catch((error: Error) => error);
          const got = batch.get(id)!;
          if (alone instanceof Error) {
            expect(got).toBeInstanceOf(Error);
            expect((got as Error).name).toBe(alone.name);
          } else expect(got).toEqual(alone);
        }
      }),
      { numRuns: 25 },
    );
  });

  it('orders the secrets active first and leaves an expired one out', async () => {
    const batch = await signingMaterialsFor(database.db, ids, TEST_SECRETS_KEY, new Date());
    const [rotated, standardWithKey, standardPlain, expired, unopenable, unknown] = ids.map((id) => batch.get(id));
    expect(rotated).toMatchObject({ scheme: 'apipay' });
    expect((rotated as { secrets: string[] }).secrets).toHaveLength(2);
    expect(standardWithKey).toMatchObject({ scheme: 'standard' });
    expect((standardWithKey as { signingKeys: string[] }).signingKeys).toHaveLength(2); // the key rotates with the secret
    expect((standardWithKey as { secrets: string[] }).secrets).toHaveLength(2);
    expect(standardPlain).toMatchObject({ scheme: 'standard', signingKeys: [] });
    expect(expired).toMatchObject({ secrets: [] });
    expect(unopenable).toBeInstanceOf(Error);
    expect(unknown).toEqual({ scheme: 'apipay', secrets: [], signingKeys: [] });
  });
});
