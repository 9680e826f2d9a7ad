// Endpoint signing secrets: generated as whsec_…, stored AES-256-GCM encrypted (a DB dump alone reveals nothing),
// rotated with a grace period during which the previous secret still signs (O8, O9). A8: each row names the master
// key that encrypted it (key_id) and is bound to its endpoint (the endpoint id is the associated data), so a row
// copied to another endpoint does not decrypt and the master key can be rotated (reencryptEndpointSecrets).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { and, asc, desc, eq, gt, inArray, isNull, ne, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { endpointSecrets, webhookEndpoints } from '../db/schema/index.js';
import { keyringOf, type Keyring, type SecretKeys } from '../shared/keyring.js';

/** A drizzle handle or a transaction on it. */
export type Executor = Db | Parameters<Parameters<Db['transaction']>[0]>[0];

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function generateEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function checkKey(key: Buffer): void {
  if (key.length !== 32) throw new Error('endpoint secret encryption key must be 32 bytes');
}

/** iv (12) | tag (16) | ciphertext; `aad`, when given, must be given again to decrypt. */
export function encryptSecret(plain: string, key: Buffer, aad?: Buffer): Buffer {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad) cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** R4: a stored secret that cannot be decrypted (wrong key, tampered or truncated row): deterministic, never retried. */
export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

export function decryptSecret(buf: Buffer, key: Buffer, aad?: Buffer): string {
  checkKey(key);
  if (buf.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError('encrypted endpoint secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, IV_BYTES));
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(buf.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  // A wrong key or a tampered row fails here (GCM authentication), never yields a wrong secret.
  try {
    return Buffer.concat([decipher.update(buf.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError('an endpoint secret cannot be decrypted with its master key (wrong key, tampered row or another endpoint\'s row)');
  }
}

const endpointAad = (endpointId: string) => Buffer.from(`apipay:endpoint-secret:${endpointId}`, 'utf8');

/** Under the current master key, bound to the endpoint. */
function sealFor(endpointId: string, plain: string, ring: Keyring): { ciphertext: Buffer; keyId: string } {
  return { ciphertext: encryptSecret(plain, ring.keys.get(ring.currentId)!, endpointAad(endpointId)), keyId: ring.currentId };
}

/** A row with a key id needs that key; a row from before key ids (null) was sealed without associated data. */
export function openRow(endpointId: string, row: { ciphertext: Buffer; keyId: string | null }, ring: Keyring): string {
  if (row.keyId !== null) {
    const key = ring.keys.get(row.keyId);
    if (!key) throw new SecretDecryptionError(`endpoint secret of ${endpointId} is encrypted with master key ${row.keyId}, which is not configured`);
    return decryptSecret(row.ciphertext, key, endpointAad(endpointId));
  }
  for (const key of new Set([ring.keys.get(ring.currentId)!, ...ring.keys.values()])) {
    try {
      return decryptSecret(row.ciphertext, key);
    } catch {
      // GCM: a wrong key fails authentication; try the next one
    }
  }
  throw new SecretDecryptionError(`endpoint secret of ${endpointId} does not decrypt with any configured master key`);
}

/** O17: whsec_ HMAC secrets, or whsk_ ed25519 signing keys (sealed the same way). */
export type SecretKind = 'hmac' | 'ed25519';

/** Stores a new active secret for an endpoint; the caller decides what happens to the previous active one. */
export async function insertEndpointSecret(db: Executor, endpointId: string, plain: string, keys: SecretKeys, kind: SecretKind = 'hmac'): Promise<void> {
  await db.insert(endpointSecrets).values({ endpointId, kind, ...sealFor(endpointId, plain, keyringOf(keys)) });
}

/**
 * A8: re-seals every secret not under the current master key (and every row from before key ids) with the current
 * one, in batches; a row changed meanwhile is left for the next run. A row no configured key opens is counted in
 * `failed` and left as it is (the run goes on). `endpointIds` limits the run (tests share one table).
 */
export async function reencryptEndpointSecrets(
  db: Db,
  keys: SecretKeys,
  options: { endpointIds?: string[]; batch?: number } = {},
): Promise<{ reencrypted: number; failed: number }> {
  const ring = keyringOf(keys);
  let reencrypted = 0;
  let failed = 0;
  let afterId = 0;
  for (;;) {
    const rows = await db
      .select({ id: endpointSecrets.id, endpointId: endpointSecrets.endpointId, ciphertext: endpointSecrets.ciphertext, keyId: endpointSecrets.keyId })
      .from(endpointSecrets)
      .where(
        and(
          gt(endpointSecrets.id, afterId),
          or(isNull(endpointSecrets.keyId), ne(endpointSecrets.keyId, ring.currentId)),
          options.endpointIds ? inArray(endpointSecrets.endpointId, options.endpointIds) : undefined,
        ),
      )
      .orderBy(asc(endpointSecrets.id))
      .limit(options.batch ?? 200);
    if (rows.length === 0) return { reencrypted, failed };
    for (const row of rows) {
      let plain: string;
      try {
        plain = openRow(row.endpointId, row, ring);
      } catch {
        failed += 1;
        continue;
      }
      const sealed = sealFor(row.endpointId, plain, ring);
      const updated = await db
        .update(endpointSecrets)
        .set(sealed)
        .where(and(eq(endpointSecrets.id, row.id), eq(endpointSecrets.ciphertext, row.ciphertext)))
        .returning({ id: endpointSecrets.id });
      reencrypted += updated.length;
    }
    afterId = rows[rows.length - 1]!.id;
  }
}

/** O9: the active secret (expires_at null, newest) first, then rotated-out ones still inside their grace period. */
export async function signingSecretsFor(db: Executor, endpointId: string, keys: SecretKeys, now: Date, kind: SecretKind = 'hmac'): Promise<string[]> {
  const ring = keyringOf(keys);
  const rows = await db
    .select({ ciphertext: endpointSecrets.ciphertext, keyId: endpointSecrets.keyId, expiresAt: endpointSecrets.expiresAt })
    .from(endpointSecrets)
    .where(
      and(
        eq(endpointSecrets.endpointId, endpointId),
        eq(endpointSecrets.kind, kind),
        or(isNull(endpointSecrets.expiresAt), gt(endpointSecrets.expiresAt, now)),
      ),
    )
    .orderBy(sql`${endpointSecrets.expiresAt} is null desc`, desc(endpointSecrets.createdAt), desc(endpointSecrets.id));
  return rows.map((row) => openRow(endpointId, row, ring));
}

/**
 * O9: the current active secret keeps signing until now + grace; a new one becomes active. Returns the new plain
 * secret (shown once to the operator). The endpoint row is locked so two concurrent rotations serialize.
 */
export async function rotateEndpointSecret(
  db: Executor,
  endpointId: string,
  keys: SecretKeys,
  graceMs: number,
  now: Date,
  kind: SecretKind = 'hmac',
  plain: string = generateEndpointSecret(),
): Promise<string> {
  await db.transaction(async (tx) => {
    const locked = await tx.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId)).for('update');
    if (locked.length === 0) throw new Error(`endpoint ${endpointId} does not exist`);
    // A secret already in its grace period keeps its own expiry; only the active one starts a grace period.
    await tx
      .update(endpointSecrets)
      .set({ expiresAt: new Date(now.getTime() + graceMs) })
      .where(and(eq(endpointSecrets.endpointId, endpointId), eq(endpointSecrets.kind, kind), isNull(endpointSecrets.expiresAt)));
    await insertEndpointSecret(tx, endpointId, plain, keys, kind);
  });
  return plain;
}
