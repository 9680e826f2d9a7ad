// A8: the master keys of endpoint secrets, by key id. One key encrypts (the current one); the others still
// decrypt until `apipay secrets reencrypt` has moved every row to the current key, so the master key rotates
// without downtime. From the environment: SECRETS_ENCRYPTION_KEY (+ SECRETS_ENCRYPTION_KEY_ID, default k1) and
// SECRETS_ENCRYPTION_PREVIOUS_KEYS ("id:base64,id:base64", decrypt only).

export interface Keyring {
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** A bare 32-byte key is a keyring of one (id k1): what tests and older callers pass. */
export type SecretKeys = Buffer | Keyring;

export const DEFAULT_KEY_ID = 'k1';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export function keyringOf(keys: SecretKeys): Keyring {
  return Buffer.isBuffer(keys) ? { currentId: DEFAULT_KEY_ID, keys: new Map([[DEFAULT_KEY_ID, keys]]) } : keys;
}

function key32(base64: string, what: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error(`${what} must be 32 bytes, base64-encoded`);
  return key;
}

/** Errors name the variable and the key id, never a key. */
export function keyringFromEnv(env: { SECRETS_ENCRYPTION_KEY: string; SECRETS_ENCRYPTION_KEY_ID?: string | undefined; SECRETS_ENCRYPTION_PREVIOUS_KEYS?: string | undefined }): Keyring {
  const currentId = env.SECRETS_ENCRYPTION_KEY_ID || DEFAULT_KEY_ID;
  if (!KEY_ID.test(currentId)) throw new Error('SECRETS_ENCRYPTION_KEY_ID must be 1–32 letters, digits, _ or -');
  const keys = new Map<string, Buffer>([[currentId, key32(env.SECRETS_ENCRYPTION_KEY, 'SECRETS_ENCRYPTION_KEY')]]);
  for (const entry of (env.SECRETS_ENCRYPTION_PREVIOUS_KEYS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const colon = entry.indexOf(':');
    const id = entry.slice(0, colon);
    if (colon < 1 || !KEY_ID.test(id)) throw new Error('SECRETS_ENCRYPTION_PREVIOUS_KEYS: each entry is id:base64');
    if (keys.has(id)) throw new Error(`SECRETS_ENCRYPTION_PREVIOUS_KEYS: key id ${id} given twice`);
    keys.set(id, key32(entry.slice(colon + 1), `SECRETS_ENCRYPTION_PREVIOUS_KEYS key ${id}`));
  }
  return { currentId, keys };
}
