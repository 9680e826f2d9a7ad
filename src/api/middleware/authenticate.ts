// Admin authentication and authorization (A1, A7, A9, A17), decided by the route that will answer: the middleware asks
// the router which route matched and looks up that route's declared access rule. Public routes are listed by
// method and path; a route without a rule is refused (fail closed). Then: bearer credential (an API key, or the
// bootstrap ADMIN_TOKEN) → 401, or 429 when that failure is past a budget of failures per client address or key id
// (A17; a credential that verifies is never refused for them, A23); the key's token bucket → 429; the role against
// the rule → 403. A26: a JWT is the identity provider's access token, verified by src/access/idp-tokens.ts (401
// when it does not verify). A28: once an IdP is configured the bootstrap token is refused for every route but
// POST /api-keys in production. A29: an IdP that cannot be reached answers a JWT 503 with Retry-After (no failure
// counted against the caller); API keys do not depend on it.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import { matchedRoutes, routePath } from 'hono/route';
import type { ApiKeyService } from '../../access/api-keys.js';
import { looksLikeJwt, type IdpVerifier } from '../../access/idp-tokens.js';
import { allows, BOOTSTRAP_PRINCIPAL, type Access, type Principal } from '../../access/roles.js';
import type { RateLimiter } from '../../lib/token-bucket.js';
import { clientAddress } from './client-address.js';
import type { CredentialThrottle } from './credential-throttle.js';
import type { AdminEnv } from '../context.js';
import { ApiError } from '../errors.js';
import { routeKey } from '../admin/access.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

export interface AuthenticateOptions {
  /** Built lazily on the first request, once every route is registered. */
  rules: () => Map<string, Access>;
  publicRoutes: Set<string>;
  bootstrapToken: string;
  keys: ApiKeyService;
  limiter: RateLimiter;
  /** A17, A23: failed credentials per client address and key id. */
  throttle: CredentialThrottle;
  /** A26: the identity provider's token verifier, when the profile names one. */
  idp?: IdpVerifier;
  /** A28: production (NODE_ENV): with an IdP, ADMIN_TOKEN only bootstraps keys. */
  production?: boolean;
}

/** A28: with an IdP in production, the routes the bootstrap token may still call. */
const BOOTSTRAP_ONLY = new Set(['POST /api-keys']);

export const authenticate = (options: AuthenticateOptions) => {
  const bootstrap = digest(options.bootstrapToken);
  let rules: Map<string, Access> | undefined;

  async function principalOf(token: string | undefined, address: () => string): Promise<Principal | undefined> {
    if (token === undefined) return undefined;
    if (token.startsWith('apk_')) return options.keys.authenticate(token);
    if (looksLikeJwt(token)) {
      if (!options.idp) return undefined;
      const verdict = await options.idp.verify(token);
      if (!verdict.ok && verdict.unavailable) throw new ApiError('unavailable', verdict.problem, undefined, verdict.retryAfterSeconds);
      if (!verdict.ok) throw new ApiError('unauthorized', verdict.problem);
      return verdict.principal;
    }
    // Hashing first gives equal-length buffers, so the comparison time does not depend on the guess.
    if (!timingSafeEqual(digest(token), bootstrap)) return undefined;
    // A23: the bootstrap token is not let through a throttled address (it may be weak; see credential-throttle.ts).
    return (await options.throttle.blocked(address())) === undefined ? BOOTSTRAP_PRINCIPAL : undefined;
  }

  return createMiddleware<AdminEnv>(async (c, next) => {
    // The path this middleware was mounted under ('/admin/v1/*' → '/admin/v1'), so route paths compare as declared.
    const base = routePath(c).replace(/\/?\*$/, '');
    const target = matchedRoutes(c).find((r) => r.method !== 'ALL');
    const key = target ? routeKey(target.method, target.path.slice(base.length) || '/') : undefined;
    if (key && options.publicRoutes.has(key)) return next();

    const header = c.req.header('authorization');
    // A26: an IdP's access token is a JWT of a few kilobytes; an API key or the bootstrap token fits in 512 characters.
    const token = /^Bearer ([\x21-\x7e]{1,8192})$/i.exec(header ?? '')?.[1];
    // A23: the credential first; only a failure is counted, and only a failure past its budget is answered 429.
    const principal = await principalOf(token, () => clientAddress(c)).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'unavailable') throw error; // A29: not the caller's failure
      if (error instanceof ApiError) return error; // A26: a token that does not verify, with the reason
      throw error;
    });
    if (!principal || principal instanceof ApiError) {
      const past = header === undefined ? undefined : await options.throttle.failed(clientAddress(c), token ?? '');
      if (past !== undefined) throw new ApiError('rate_limited', 'too many failed credentials from this address or for this key; retry later', undefined, past);
      c.header('WWW-Authenticate', 'Bearer realm="apipay-admin"');
      throw principal ?? new ApiError('unauthorized', 'a valid bearer token (API key) is required');
    }
    const taken = options.limiter.take(principal.keyId);
    if (!taken.allowed) throw new ApiError('rate_limited', 'rate limit of this API key exceeded; retry later', undefined, taken.retryAfterMs / 1000);
    const clientRequestId = c.get('clientRequestId' as never) as string | undefined; // A24: kept beside the server's
    c.set('principal', { ...principal, requestId: c.get('requestId'), ...(clientRequestId ? { clientRequestId } : {}) }); // A3
    if (!key) return next(); // no such route: the 404 goes to an authenticated caller only

    rules ??= options.rules();
    const rule = rules.get(key);
    if (!rule) throw new Error(`admin route ${key} declares no access rule`); // a programming error: refuse, 500
    if (options.idp && options.production && principal === BOOTSTRAP_PRINCIPAL && !BOOTSTRAP_ONLY.has(key)) {
      throw new ApiError('forbidden', 'ADMIN_TOKEN only creates service keys once an identity provider is configured; sign in through it');
    }
    if (!allows(rule, principal)) {
      throw new ApiError('forbidden', `role ${principal.role} may not call ${key} (requires ${rule.role}${rule.merchant ? ' or a merchant key' : ''})`);
    }
    return next();
  });
};
