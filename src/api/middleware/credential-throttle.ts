// A17: guessing credentials is not free. Failed bearer credentials on the admin API and failed sign-ins of the
// console and portal count against the client's address and, for an apk_… key, against that key's id. An address
// that has spent its budget is answered 429 with Retry-After before its credential is even checked (so a right guess
// is refused too, and guessing gains nothing). A key id past its budget answers 429 instead of 401 to wrong secrets
// only: its owner's right secret still works, so nobody who can read a key id (audit rows name them) can lock that
// key out. Successful requests spend nothing. In memory, per process.
import type { Profile } from '../../config/profile.js';
import { createRateLimiter, type RateLimit } from '../../lib/token-bucket.js';

export interface CredentialThrottle {
  /** Seconds to wait before this address may try again, or undefined when it may try now. */
  blocked(address: string): number | undefined;
  /** Counts one failed attempt; answers the seconds to wait when it was past a budget (429, not 401). */
  failed(address: string, token: string): number | undefined;
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
    blocked(address) {
      const a = byAddress.peek(address);
      return a.allowed ? undefined : seconds(a.retryAfterMs);
    },
    failed(address, token) {
      const a = byAddress.take(address);
      const keyId = keyIdOf(token);
      const k = keyId ? byKey.take(keyId) : { allowed: true as const };
      if (!k.allowed) return seconds(k.retryAfterMs);
      return a.allowed ? undefined : seconds(a.retryAfterMs);
    },
  };
}

export const credentialThrottleFrom = (profile: Profile) =>
  createCredentialThrottle({ perAddress: profile.admin.failed_auth_per_address, perKey: profile.admin.failed_auth_per_key });
