// HMAC-SHA256 and constant-time comparison shared by the signature schemes.
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacSha256(secret: string, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Compares a received signature with the expected bytes without leaking where they differ. */
export function safeEqual(expected: Buffer, received: Buffer): boolean {
  return expected.length === received.length && timingSafeEqual(expected, received);
}
