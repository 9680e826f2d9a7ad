// Endpoint signing secrets: generated as whsec_…, stored AES-256-GCM encrypted (a DB dump alone reveals nothing),
// rotated with a grace period during which the previous secret still signs (O8, O9).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { endpointSecrets, webhookEndpoints } from '../db/schema/index.js';

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

/** iv (12) | tag (16) | ciphertext. */
export function encryptSecret(plain: string, key: Buffer): Buffer {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
}

/** R4: a stored secret that cannot be decrypted (wrong key, tampered or truncated row): deterministic, never retried. */
export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

export function decryptSecret(buf: Buffer, key: Buffer): string {
  checkKey(key);
  if (buf.length < IV_BYTES + TAG_BYTES) throw new SecretDecryptionError('encrypted endpoint secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, IV_BYTES));
  decipher.setAuthTag(buf.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  // A wrong key or a tampered row fails here (GCM authentication), never yields a wrong secret.
  try {
    return Buffer.concat([decipher.update(buf.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptionError('an endpoint secret cannot be decrypted with SECRETS_ENCRYPTION_KEY (wrong key or tampered row)');
  }
}

/** Stores a new active secret for an endpoint; the caller decides what happens to the previous active one. */
export async function insertEndpointSecret(db: Executor, endpointId: string, plain: string, key: Buffer): Promise<void> {
  await db.insert(endpointSecrets).values({ endpointId, ciphertext: encryptSecret(plain, key) });
}

/** O9: the active secret (expires_at null, newest) first, then rotated-out ones still inside their grace period. */
export async function signingSecretsFor(db: Executor, endpointId: string, key: Buffer, now: Date): Promise<string[]> {
  const rows = await db
    .select({ ciphertext: endpointSecrets.ciphertext, expiresAt: endpointSecrets.expiresAt })
    .from(endpointSecrets)
    .where(and(eq(endpointSecrets.endpointId, endpointId), or(isNull(endpointSecrets.expiresAt), gt(endpointSecrets.expiresAt, now))))
    .orderBy(sql`${endpointSecrets.expiresAt} is null desc`, desc(endpointSecrets.createdAt), desc(endpointSecrets.id));
  return rows.map((row) => decryptSecret(row.ciphertext, key));
}

/**
 * O9: the current active secret keeps signing until now + grace; a new one becomes active. Returns the new plain
 * secret (shown once to the operator). The endpoint row is locked so two concurrent rotations serialize.
 */
export async function rotateEndpointSecret(db: Db, endpointId: string, key: Buffer, graceMs: number, now: Date): Promise<string> {
  const plain = generateEndpointSecret();
  await db.transaction(async (tx) => {
    const locked = await tx.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId)).for('update');
    if (locked.length === 0) throw new Error(`endpoint ${endpointId} does not exist`);
    // A secret already in its grace period keeps its own expiry; only the active one starts a grace period.
    await tx
      .update(endpointSecrets)
      .set({ expiresAt: new Date(now.getTime() + graceMs) })
      .where(and(eq(endpointSecrets.endpointId, endpointId), isNull(endpointSecrets.expiresAt)));
    await insertEndpointSecret(tx, endpointId, plain, key);
  });
  return plain;
}
