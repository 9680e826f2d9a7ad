// A17, A23: guessing is not free, and it never locks out a right credential. A failed bearer credential on the
// admin API, a failed console/portal sign-in and a portal link that does not open each count against the client's
// address (an IPv6 client by its /64) and, for an apk_… key, against that key's id. Past a budget the failure is
// answered 429 with Retry-After instead of 401. A credential that verifies is checked first and is never refused
// for its address's or its key id's failures: an attacker behind the same proxy or NAT, or one who read a key id in
// an audit row, cannot lock its owner out (the credentials are 256-bit random, so the budget is about cost, not odds).
// The one exception is the bootstrap ADMIN_TOKEN, which a person may have chosen (16 characters at least): it is
// refused from an address past its budget, so a throttled guesser cannot use a right answer as an oracle.
// Successful requests spend nothing. The buckets are shared by every replica through PostgreSQL (failure-buckets.ts).
import type { FailureBuckets } from '../../access/failure-buckets.js';
import type { Profile } from '../../config/profile.js';
import type { RateLimit } from '../../lib/token-bucket.js';

export interface CredentialThrottle {
  /** Seconds until this address may try again, or undefined when it is within its budget (a read, no write). */
  blocked(address: string): Promise<number | undefined>;
  /** Counts one failed attempt; answers the seconds to wait when it was past a budget (429, not 401). */
  failed(address: string, token: string): Promise<number | undefined>;
}

/** The key id a presented apk_… token claims (its public part), or undefined for anything else. */
const keyIdOf = (token: string) => /^(apk_[0-9a-z]{26})(?:_|$)/.exec(token)?.[1];

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function createCredentialThrottle(
  buckets: FailureBuckets,
  limits: { perAddress: RateLimit; perKey: RateLimit },
): CredentialThrottle {
  return {
    async blocked(address) {
      const a = await buckets.peek('failed_auth:address', address, limits.perAddress);
      return a.allowed ? undefined : seconds(a.retryAfterMs);
    },
    async failed(address, token) {
      const keyId = keyIdOf(token);
      const [a, k] = await Promise.all([
        buckets.take('failed_auth:address', address, limits.perAddress),
        keyId ? buckets.take('failed_auth:key', keyId, limits.perKey) : { allowed: true as const },
      ]);
      const waits = [a, k].flatMap((t) => (t.allowed ? [] : [t.retryAfterMs]));
      return waits.length ? seconds(Math.max(...waits)) : undefined;
    },
  };
}

export const credentialThrottleFrom = (profile: Profile, buckets: FailureBuckets) =>
  createCredentialThrottle(buckets, {
    perAddress: profile.admin.failed_auth_per_address,
    perKey: profile.admin.failed_auth_per_key,
  });
