// A8: master keys from the environment; errors name the variable and the key id, never a key.
import { describe, expect, it } from 'vitest';
import { keyringFromEnv, keyringOf } from '../../src/shared/keyring.js';

const k = (n: number) => Buffer.alloc(32, n).toString('base64');

describe('A8 keyring', () => {
  it('A8 the current key seals under its id; previous keys open only', () => {
    const ring = keyringFromEnv({ SECRETS_ENCRYPTION_KEY: k(2), SECRETS_ENCRYPTION_KEY_ID: 'k2', SECRETS_ENCRYPTION_PREVIOUS_KEYS: `k1:${k(1)}, k0:${k(0)}` });
    expect(ring.currentId).toBe('k2');
    expect([...ring.keys.keys()]).toEqual(['k2', 'k1', 'k0']);
    expect(keyringOf(Buffer.alloc(32, 7)).currentId).toBe('k1');
    expect(keyringFromEnv({ SECRETS_ENCRYPTION_KEY: k(2) }).currentId).toBe('k1');
  });

  it.each([
    [{ SECRETS_ENCRYPTION_KEY: 'c2hvcnQ=' }, /SECRETS_ENCRYPTION_KEY must be 32 bytes/],
    [{ SECRETS_ENCRYPTION_KEY: k(1), SECRETS_ENCRYPTION_PREVIOUS_KEYS: 'nocolon' }, /id:base64/],
    [{ SECRETS_ENCRYPTION_KEY: k(1), SECRETS_ENCRYPTION_PREVIOUS_KEYS: `k1:${k(2)}` }, /k1 given twice/],
    [{ SECRETS_ENCRYPTION_KEY: k(1), SECRETS_ENCRYPTION_PREVIOUS_KEYS: 'k0:c2hvcnQ=' }, /key k0 must be 32 bytes/],
    [{ SECRETS_ENCRYPTION_KEY: k(1), SECRETS_ENCRYPTION_KEY_ID: 'bad id!' }, /SECRETS_ENCRYPTION_KEY_ID/],
  ])('A8 %j is refused by name', (env, message) => {
    expect(() => keyringFromEnv(env)).toThrow(message);
    try {
      keyringFromEnv(env);
    } catch (error) {
      expect((error as Error).message).not.toContain(k(2));
    }
  });
});
