// O16/O17: the signature headers of one attempt in its endpoint's scheme. apipay: `ApiPay-Signature: t=…,v1=…`
// (one v1 per whsec_ secret in use); standard: Standard Webhooks' webhook-id (the event id from the stored body, so
// the same on every retry and every endpoint), webhook-timestamp and webhook-signature with one v1 per secret and,
// when the endpoint has an ed25519 key, one v1a per whsk_ key in use (O9: rotated-out keys sign during their grace).
import { eq } from 'drizzle-orm';
import { webhookEndpoints } from '../db/schema/index.js';
import type { SignatureScheme } from '../shared/outbound.js';
import { sign, SIGNATURE_HEADER, signStandard } from '../signing/index.js';
import type { SecretKeys } from '../shared/keyring.js';
import { signingSecretsFor, type Executor } from './secrets.js';

export type SignedHeaders = Record<string, string>;

export interface SigningMaterial {
  scheme: SignatureScheme;
  /** whsec_ secrets, active first. */
  secrets: string[];
  /** whsk_ ed25519 keys, active first; empty unless the scheme is standard and the endpoint has a signing key. */
  signingKeys: string[];
}

/** Read at each attempt: a scheme switched or a key rotated since the last attempt applies to this one. */
export async function signingMaterialFor(db: Executor, endpointId: string, keys: SecretKeys, at: Date): Promise<SigningMaterial> {
  const [endpoint] = await db
    .select({ scheme: webhookEndpoints.signatureScheme, publicKey: webhookEndpoints.signingPublicKey })
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, endpointId));
  const scheme = endpoint?.scheme ?? 'apipay';
  const secrets = await signingSecretsFor(db, endpointId, keys, at);
  const signingKeys =
    scheme === 'standard' && endpoint?.publicKey ? await signingSecretsFor(db, endpointId, keys, at, 'ed25519') : [];
  return { scheme, secrets, signingKeys };
}

/** The event id a Standard Webhooks receiver deduplicates on: the stored body's `id` (O3, O4). */
export function eventIdOf(body: Buffer): string {
  const id = (JSON.parse(body.toString('utf8')) as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '') throw new Error('the stored event body has no id');
  return id;
}

export function signatureHeaders(material: SigningMaterial, body: Buffer, timestamp: number): SignedHeaders {
  if (material.scheme === 'apipay') return { [SIGNATURE_HEADER]: sign({ payload: body, secrets: material.secrets, timestamp }) };
  return signStandard({
    id: eventIdOf(body),
    timestamp,
    payload: body,
    secrets: material.secrets,
    signingKeys: material.signingKeys,
  });
}
