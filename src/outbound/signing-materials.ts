// O9, O16, O17, P14: the signing material of many endpoints at once — one query for their schemes, public keys and
// secrets in use — for the batched first attempts (./first-attempts.ts), whose chunks meet up to `concurrency`
// endpoints never signed for before. Per endpoint the same as signingMaterialFor (./signature-headers.ts): whsec_
// secrets active first then those in their grace period, whsk_ keys only for a standard endpoint with a signing key.
// Two queries per endpoint were ~40 % of the dispatcher's CPU for a burst spread over 10,000 merchants.
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { endpointSecrets, webhookEndpoints } from '../db/schema/index.js';
import { keyringOf, type SecretKeys } from '../shared/keyring.js';
import { openRow, type Executor } from './secrets.js';
import type { SigningMaterial } from './signature-headers.js';

/** Each endpoint's material, or the error that opening its secrets raised; an unknown endpoint has no secrets. */
export async function signingMaterialsFor(
  db: Executor,
  endpointIds: string[],
  keys: SecretKeys,
  at: Date,
): Promise<Map<string, SigningMaterial | Error>> {
  const out = new Map<string, SigningMaterial | Error>();
  if (endpointIds.length === 0) return out;
  const ring = keyringOf(keys);
  const rows = await db
    .select({
      endpointId: webhookEndpoints.id,
      scheme: webhookEndpoints.signatureScheme,
      publicKey: webhookEndpoints.signingPublicKey,
      kind: endpointSecrets.kind,
      ciphertext: endpointSecrets.ciphertext,
      keyId: endpointSecrets.keyId,
    })
    .from(webhookEndpoints)
    .leftJoin(
      endpointSecrets,
      and(
        eq(endpointSecrets.endpointId, webhookEndpoints.id),
        or(isNull(endpointSecrets.expiresAt), gt(endpointSecrets.expiresAt, at)),
      ),
    )
    .where(sql`${webhookEndpoints.id} = any(${sql.param(endpointIds)}::text[])`)
    .orderBy(
      webhookEndpoints.id,
      sql`${endpointSecrets.expiresAt} is null desc`,
      desc(endpointSecrets.createdAt),
      desc(endpointSecrets.id),
    );
  for (const id of endpointIds) out.set(id, { scheme: 'apipay', secrets: [], signingKeys: [] });
  for (const row of rows) {
    const material = out.get(row.endpointId);
    if (!material || material instanceof Error) continue;
    material.scheme = row.scheme;
    if (row.ciphertext === null || row.kind === null) continue;
    if (row.kind === 'ed25519' && !(row.scheme === 'standard' && row.publicKey)) continue;
    try {
      const plain = openRow(row.endpointId, { ciphertext: row.ciphertext, keyId: row.keyId }, ring);
      (row.kind === 'hmac' ? material.secrets : material.signingKeys).push(plain);
    } catch (error) {
      out.set(row.endpointId, error as Error);
    }
  }
  return out;
}
