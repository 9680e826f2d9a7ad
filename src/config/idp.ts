// A25–A27: the profile's `idp` block: the organisation's OpenID Connect provider, by issuer URL. Nothing here (or
// anywhere in src/) is specific to one provider: the issuer's discovery document names its signing keys, a claim
// carries the groups, and the groups map to ApiPay roles by this table. Absent: no IdP (API keys only, and dual
// control between keys, which is for development: docs/access.md). A30: `console` names the console's OIDC client
// (authorization code + PKCE; step-up sends the approver back with prompt=login, max_age=0 and acr_values).
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { envSecretRef } from './secret-ref.js';

const duration = z.string().transform((text, ctx) => {
  try {
    return parseDuration(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** Asymmetric JWS algorithms only: `none` and the HMAC family (a shared secret is no proof of the IdP) never verify. */
export const IDP_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

export const idpSchema = z.strictObject({
  /** The `iss` every token must carry; `<issuer>/.well-known/openid-configuration` names the JWKS. */
  issuer: z.url(),
  /** The `aud` the admin API's access tokens must contain (the IdP adds it with an audience mapper). */
  audience: z.string().min(1),
  algorithms: z.array(z.enum(IDP_ALGORITHMS)).min(1).default(['RS256', 'PS256', 'ES256']),
  /** How long the fetched JWKS is trusted: a key the IdP removed still verifies until then (a new key id: at once). */
  jwks_cache_max_age: duration.prefault('10m'),
  /** Leeway on exp / nbf / iat between the IdP's clock and ours. */
  clock_tolerance: duration.prefault('5s'),
  /** The claim that lists the person's groups (or roles), and which ApiPay role each group gives; the highest wins. */
  groups_claim: z.string().min(1).default('groups'),
  roles: z.record(z.string().min(1), z.enum(['viewer', 'operator', 'admin', 'merchant'])),
  /** For a group mapped to `merchant`: the claim naming the one merchant account the person sees. */
  merchant_claim: z.string().min(1).default('merchant_account'),
  /** A27: a second factor is an `amr` value in this list, or an `acr` in `second_factor_acr`. */
  second_factor_amr: z.array(z.string().min(1)).default(['otp', 'mfa', 'hwk', 'swk', 'sms']),
  second_factor_acr: z.array(z.string().min(1)).default([]),
  /** A27: an approver's sign-in (auth_time) must be at most this old; older answers step-up. */
  approval_max_age: duration.prefault('5m'),
  /** A30: the console signs people in through the IdP with this confidential client (absent: no IdP sign-in). */
  console: z
    .strictObject({
      client_id: z.string().min(1).default('apipay-console'),
      client_secret_ref: envSecretRef,
      scope: z.string().min(1).default('openid profile email'),
      /** Sent as acr_values when an approver is sent back for a fresh second factor (if the IdP needs one). */
      step_up_acr_values: z.string().min(1).optional(),
    })
    .optional(),
});

export type IdpConfig = z.output<typeof idpSchema>;
