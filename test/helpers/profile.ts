// A profile for tests: the example profile with test secrets and private URLs allowed (local receivers).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { parseProfile, type Profile } from '../../src/config/profile.js';

export const TEST_PROVIDER_SECRETS = {
  SANDBOX_STRIPE_WEBHOOK_SECRET: 'whsec_test_sandbox_stripe_0123456789abcdef',
  SANDBOX_HMAC_WEBHOOK_SECRET: 'test-sandbox-hmac-secret-0123456789',
};

/** Deep-merges `overrides` into config/example.yaml before validation. */
export function testProfile(overrides: Record<string, unknown> = {}): Profile {
  // Always the test values: a developer's .data/dev.env must not change what the tests sign with.
  for (const [name, value] of Object.entries(TEST_PROVIDER_SECRETS)) process.env[name] = value;
  const base = parse(readFileSync(new URL('../../config/example.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
  // A7's admin limit is per key; tests send many requests with one key, so only the rate-limit tests set it low.
  // A4: most workflow tests resolve through the resolve update directly (as the Temporal UI would), so they allow it;
  // the A4 tests set deny.
  // P12: retry waits without jitter, so that tests can name the exact next_attempt_at; the jitter tests set it.
  // P16: no circuit on a burst, so that a retry test's failing receiver sees every scheduled attempt; the circuit's
  // tests (outbound-parking, outbound-retry-parking) and the soak set it.
  const merged = merge(base, {
    outbound: { allow_insecure_urls: true, recovery: { jitter: 0 }, circuit: { open_after_burst: 0 } },
    admin: { rate_limit: { per_second: 100_000, burst: 100_000 } },
    inbound: { resolution_via_temporal: 'allow' },
  });
  return parseProfile(merge(merged, overrides), 'test profile');
}

function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] = isObject(prev) && isObject(v) ? merge(prev, v) : v;
  }
  return out;
}
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
