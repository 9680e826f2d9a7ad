// One entry of the profile's `inbound.providers` (I1, I15): the keys every provider has; its scheme's own keys are
// kept as written for the scheme's file to validate (src/providers/index.ts).
import { z } from 'zod';
import { rateLimit, secretRef } from './profile-values.js';

const providerBase = {
  secret_ref: secretRef,
  /** A8: while the provider rotates its signing secret, signatures made with this one are accepted too. */
  previous_secret_ref: secretRef.optional(),
  /** A7: this provider's own bucket instead of inbound.rate_limit. */
  rate_limit: rateLimit.optional(),
  api_base_url: z.url(),
  tolerance_seconds: z.number().int().positive().default(300),
  /** M1: the merchant account this provider's ledger events belong to (default: the provider's name). */
  merchant_account: z.string().min(1).max(200).optional(),
  /** M1: whether those events are live (true) or test mode. */
  livemode: z.boolean().default(false),
};

/**
 * I15: the keys every provider entry has. Its scheme's own keys (hmac's `header`, stripe_api's `api_key_ref`, …) are
 * kept as written and validated, strictly, by the scheme's file when the provider registry is built
 * (src/providers/index.ts), so a new scheme needs no edit here.
 */
export const provider = z
  .object({
    scheme: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'must be a scheme name such as stripe, hmac or stripe_api'),
    ...providerBase,
  })
  .catchall(z.unknown());
