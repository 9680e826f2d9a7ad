// O8/O9: endpoint secrets are whsec_… strings, encrypted at rest with AES-256-GCM; a wrong key or tampering fails.
import { describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret, generateEndpointSecret } from '../../src/outbound/secrets.js';

const key = Buffer.alloc(32, 7);

describe('endpoint secrets', () => {
  it('O8 a generated secret is whsec_ + base64 of 32 random bytes, different every time', () => {
    const a = generateEndpointSecret();
    const b = generateEndpointSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });

  it('O8 encryption round-trips, is randomized (iv | tag | ciphertext) and never contains the plain text', () => {
    const plain = generateEndpointSecret();
    const one = encryptSecret(plain, key);
    const two = encryptSecret(plain, key);
    expect(one.equals(two)).toBe(false);
    expect(one.length).toBe(12 + 16 + Buffer.byteLength(plain));
    expect(one.toString('latin1')).not.toContain(plain.slice(6, 20));
    expect(decryptSecret(one, key)).toBe(plain);
    expect(decryptSecret(two, key)).toBe(plain);
  });

  it.each([
    ['wrong key', (buf: Buffer) => decryptSecret(buf, Buffer.alloc(32, 8))],
    ['tampered ciphertext', (buf: Buffer) => decryptSecret(Buffer.concat([buf.subarray(0, buf.length - 1), Buffer.from([buf[buf.length - 1]! ^ 1])]), key)],
    ['truncated', (buf: Buffer) => decryptSecret(buf.subarray(0, 20), key)],
    ['short key', (buf: Buffer) => decryptSecret(buf, Buffer.alloc(16))],
  ])('O8 decryption fails on %s', (_name, fn) => {
    expect(() => fn(encryptSecret('whsec_abc', key))).toThrow();
  });
});
