// A17: guessing credentials is not free. Failed bearer credentials on the admin API and failed sign-ins of the
// console and portal count against the client's address and, for an apk_… key, against that key's id; once either
// budget is spent the next attempt is answered 429 with Retry-After before the credential is even checked (so a
// right guess is refused too, and guessing gains nothing). Successful requests spend nothing. In memory, per process.
import type { Profile } from '../../config/profile.js';
import { createRateLimiter, type RateLimit } from '../../lib/token-bucket.js';

export interface CredentialThrottle {
  /** Seconds to wait before this address or key may try again, or undefined when it may try now. */
  blocked(address: string, token: string): number | undefined;
  /** Counts one failed attempt. */
  failed(address: string, token: string): void;
}

/** The key id a presented apk_… token claims (its public part), or undefined for anything else. */
const keyIdOf = (token: string) => /^(apk_[0-9a-z]{26})(?:_|$)/.exec(token)?.[1];

export function createCredentialThrottle(
  limits: { perAddress: RateLimit; perKey: RateLimit },
  options: { now?: () => number } = {},
): CredentialThrottle {
  const byAddress = createRateLimiter(limits.perAddress, options);
  const byKey = createRateLimiter(limits.perKey, options);
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  return {
    blocked(address, token) {
      const a = byAddress.peek(address);
      if (!a.allowed) return seconds(a.retryAfterMs);
      const keyId = keyIdOf(token);
      const k = keyId ? byKey.peek(keyId) : undefined;
      return k && !k.allowed ? seconds(k.retryAfterMs) : undefined;
    },
    failed(address, token) {
      byAddress.take(address);
      const keyId = keyIdOf(token);
      if (keyId) byKey.take(keyId);
    },
  };
}

export const credentialThrottleFrom = (profile: Profile) =>
  createCredentialThrottle({ perAddress: profile.admin.failed_auth_per_address, perKey: profile.admin.failed_auth_per_key });
