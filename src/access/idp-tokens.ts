// A26: the admin API accepts the identity provider's access tokens. A JWT is verified with `jose` against the signing
// keys the issuer's discovery document names (createRemoteJWKSet: fetched on first use, fetched again when a token
// names a key id it does not hold, so the IdP's key rotation needs no restart; a key the IdP removed verifies
// nothing), with the issuer, the audience, exp/nbf, and an allowlist of asymmetric algorithms (never `none`, never
// HMAC). The person is the IdP subject (iss + sub), with the name, e-mail and groups the token carries; the groups
// map to an ApiPay role by the profile's table. Provider-neutral: OpenID Connect discovery and RFC 9068 claims only.
// A29: an issuer whose discovery or JWKS cannot be fetched is `unavailable` (the caller answers 503), never a 401;
// for IDP_RETRY_SECONDS after such a failure the verifier answers unavailable without asking again.
import { createRemoteJWKSet, customFetch, decodeJwt, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { IdpConfig } from '../config/idp.js';
import type { IdpIdentity, Principal, Role } from './roles.js';

/** A JWT's shape: three base64url parts. API keys (apk_…) and the bootstrap token never look like one. */
export const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);

/** The key id an IdP subject acts under in rate limits, proposals and audit rows: `idp:<sub>@<issuer>`. */
export const idpKeyId = (issuer: string, subject: string) => `idp:${subject}@${issuer}`;
export const isIdpKey = (keyId: string) => keyId.startsWith('idp:');

const RANK: Record<Exclude<Role, 'merchant'>, number> = { viewer: 0, operator: 1, admin: 2 };

/** The ApiPay role the groups give (the highest staff role; merchant only when no staff group matches), or null. */
export function roleOfGroups(config: IdpConfig, groups: string[]): Role | null {
  let best: Role | null = null;
  for (const group of groups) {
    const role = config.roles[group.replace(/^\//, '')];
    if (!role) continue;
    if (role === 'merchant') best ??= 'merchant';
    else if (best === null || best === 'merchant' || RANK[role] > RANK[best]) best = role;
  }
  return best;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];

export type IdpVerdict =
  | { ok: true; principal: Principal }
  | { ok: false; problem: string; unavailable?: false }
  /** A29: the issuer's discovery document or JWKS could not be fetched: no verdict on the token (503, Retry-After). */
  | { ok: false; problem: string; unavailable: true; retryAfterSeconds: number };

export interface IdpVerifier {
  verify(token: string): Promise<IdpVerdict>;
}

/** A29: how long after a failed fetch of the discovery or the JWKS the verifier answers unavailable at once. */
export const IDP_RETRY_SECONDS = 5;

/** A29: the discovery document or the JWKS could not be fetched (network, timeout, non-200, not a key set). */
export class IdpUnreachable extends Error {
  override name = 'IdpUnreachable';
}

/** jose's answers about the token's key, not about the IdP: these are the token's fault (401). */
const TOKEN_KEY_ERRORS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_NOT_SUPPORTED']);

/** The JWKS of the issuer's discovery document; the discovery is read once (again after a failure). */
function discoveredKeys(config: IdpConfig, fetchImpl: typeof fetch): JWTVerifyGetKey {
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const load = async () => {
    const url = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const res = await fetchImpl(url, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`discovery ${url} answered ${res.status}`);
    const doc = (await res.json()) as { issuer?: string; jwks_uri?: string };
    if (doc.issuer !== config.issuer) throw new Error(`discovery names issuer ${doc.issuer}, the profile ${config.issuer}`);
    if (!doc.jwks_uri) throw new Error('discovery names no jwks_uri');
    return createRemoteJWKSet(new URL(doc.jwks_uri), {
      timeoutDuration: 5000,
      cooldownDuration: 30_000,
      cacheMaxAge: config.jwks_cache_max_age,
      [customFetch]: (url, options) => fetchImpl(url, options), // the same peer as the discovery (a test's fake)
    });
  };
  return async (header, input) => {
    keys ??= load().catch((error: unknown) => {
      keys = undefined;
      throw new IdpUnreachable(`discovery: ${(error as Error).message}`);
    });
    const remote = await keys;
    try {
      return await remote(header, input);
    } catch (error) {
      if (TOKEN_KEY_ERRORS.has((error as { code?: string }).code ?? '')) throw error;
      throw new IdpUnreachable(`JWKS: ${(error as Error).message}`);
    }
  };
}

/** The unverified `iss` of a token (to refuse another issuer's token without fetching anything), or undefined. */
function claimedIssuer(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

/** The person a verified token's (or ID token's, A30) claims name: subject, name, e-mail, groups → role, amr, acr. */
export function principalOfClaims(config: IdpConfig, payload: JWTPayload): IdpVerdict {
  const subject = payload.sub;
  if (typeof subject !== 'string' || !subject) return { ok: false, problem: 'the token names no subject (sub)' };
  const groups = strings(payload[config.groups_claim]);
  const role = roleOfGroups(config, groups);
  if (!role)
    return {
      ok: false,
      problem: `no group in the token's ${config.groups_claim} claim maps to an ApiPay role (profile idp.roles)`,
    };
  const merchant = role === 'merchant' ? (strings(payload[config.merchant_claim])[0] ?? null) : null;
  if (role === 'merchant' && !merchant)
    return { ok: false, problem: `a merchant's token must name its account (${config.merchant_claim})` };
  const name = [payload.name, payload.preferred_username, payload.email, subject].find(
    (v) => typeof v === 'string' && v.trim(),
  ) as string;
  const idp: IdpIdentity = {
    issuer: config.issuer,
    subject,
    email: typeof payload.email === 'string' ? payload.email : null,
    groups,
    amr: strings(payload.amr),
    acr: typeof payload.acr === 'string' ? payload.acr : null,
    authTime: typeof payload.auth_time === 'number' ? payload.auth_time : null,
  };
  return { ok: true, principal: { keyId: idpKeyId(config.issuer, subject), name, role, merchantAccount: merchant, idp } };
}

export function createIdpVerifier(
  config: IdpConfig,
  options: {
    fetch?: typeof fetch;
    keys?: JWTVerifyGetKey;
    /** A29: told once per failed fetch (not per refused request) why the IdP is unreachable; never the token. */
    onUnreachable?: (reason: string) => void;
    now?: () => number;
  } = {},
): IdpVerifier {
  const keys = options.keys ?? discoveredKeys(config, options.fetch ?? fetch);
  const now = options.now ?? Date.now;
  let downUntil = 0;
  const unavailable = (): IdpVerdict => ({
    ok: false,
    unavailable: true,
    problem: 'the identity provider cannot be reached to verify this token; retry later (API keys are not affected)',
    retryAfterSeconds: Math.max(1, Math.ceil((downUntil - now()) / 1000)),
  });
  return {
    async verify(token) {
      let payload: JWTPayload;
      // Another issuer's token is refused on its face: no fetch, and no 503 for it when our IdP is down.
      if (claimedIssuer(token) !== config.issuer)
        return { ok: false, problem: `the identity provider's token does not verify (ERR_JWT_CLAIM_VALIDATION_FAILED: iss)` };
      if (now() < downUntil) return unavailable();
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: [...config.algorithms],
          clockTolerance: Math.round(config.clock_tolerance / 1000),
          requiredClaims: ['exp', 'sub'],
        }));
      } catch (error) {
        if (error instanceof IdpUnreachable) {
          downUntil = now() + IDP_RETRY_SECONDS * 1000;
          options.onUnreachable?.(error.message);
          return unavailable();
        }
        return {
          ok: false,
          problem: `the identity provider's token does not verify (${(error as { code?: string }).code ?? 'invalid'})`,
        };
      }
      return principalOfClaims(config, payload);
    },
  };
}
