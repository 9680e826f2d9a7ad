// M11, A8: a destination's secret fields sealed like endpoint secrets (src/outbound/secrets.ts): AES-256-GCM under the
// current master key, bound to the endpoint (its id is the associated data, in a purpose of its own so a sealed
// credential never opens as a signing secret), naming the key that sealed it.
import { decryptSecret, encryptSecret, SecretDecryptionError } from '../secrets.js';
import { keyringOf, type SecretKeys } from '../../shared/keyring.js';

const aad = (endpointId: string) => Buffer.from(`apipay:endpoint-destination:${endpointId}`, 'utf8');

export interface SealedCredentials {
  ciphertext: Buffer;
  keyId: string;
}

export function sealCredentials(endpointId: string, credentials: Record<string, string>, keys: SecretKeys): SealedCredentials {
  const ring = keyringOf(keys);
  return {
    ciphertext: encryptSecret(JSON.stringify(credentials), ring.keys.get(ring.currentId)!, aad(endpointId)),
    keyId: ring.currentId,
  };
}

export function openCredentials(
  endpointId: string,
  sealed: { ciphertext: Buffer | null; keyId: string | null },
  keys: SecretKeys,
): Record<string, string> {
  if (sealed.ciphertext === null) return {};
  const key = keyringOf(keys).keys.get(sealed.keyId ?? '');
  if (!key)
    throw new SecretDecryptionError(
      `the destination credentials of ${endpointId} are sealed with master key ${sealed.keyId}, which is not configured`,
    );
  return JSON.parse(decryptSecret(sealed.ciphertext, key, aad(endpointId))) as Record<string, string>;
}
