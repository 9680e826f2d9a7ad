// A26, A27 test helpers: a local OpenID Connect issuer (discovery + JWKS over real HTTP on 127.0.0.1, keys made by
// jose, rotatable) that mints access tokens with the claims a test needs, and real tokens from the stack's Keycloak
// (direct grant with the password and a TOTP code by otplib, for the demo people of scripts/stack/keycloak-realm.json).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { generate } from 'otplib';

export const IDP_AUDIENCE = 'apipay-admin-api';
export const IDP_ROLES = {
  viewer: 'viewer',
  operator: 'operator',
  'finance-approver': 'operator',
  admin: 'admin',
  merchant: 'merchant',
} as const;

export interface LocalIssuer {
  issuer: string;
  /** The profile's `idp` block for this issuer. */
  profile: Record<string, unknown>;
  /** An access token for `sub` with `claims` (exp in 5 min, auth_time now and amr pwd+otp unless given). */
  mint(sub: string, claims?: JWTPayload & { exp?: number }): Promise<string>;
  /** A new signing key; the old one leaves the JWKS (tokens it signed no longer verify). */
  rotate(): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalIssuer(): Promise<LocalIssuer> {
  let key = await newKey();
  const server: Server = createServer((req, res) => {
    const base = issuer;
    if (req.url === '/.well-known/openid-configuration') {
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks` }));
    } else if (req.url === '/jwks') {
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys: [key.publicJwk] }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const issuer = `http://127.0.0.1:${port}`;
  return {
    issuer,
    profile: { issuer, audience: IDP_AUDIENCE, roles: IDP_ROLES, approval_max_age: '5m', jwks_cache_max_age: '1s' },
    async mint(sub, claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      const { exp, aud, ...rest } = claims;
      return new SignJWT({ auth_time: now, amr: ['pwd', 'otp'], name: sub, groups: ['operator'], ...rest })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid })
        .setIssuer(issuer)
        .setAudience(aud ?? IDP_AUDIENCE)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime(exp ?? now + 300)
        .sign(key.privateKey);
    },
    async rotate() {
      key = await newKey();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function newKey() {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const kid = randomUUID();
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicJwk };
}

/** An unsigned token (`alg: none`) with the claims of a valid one. */
export function unsignedToken(issuer: string, sub: string): string {
  const part = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: issuer, aud: IDP_AUDIENCE, sub, exp: now + 300, iat: now, groups: ['admin'], amr: ['otp'], auth_time: now })}.`;
}

// ---------------------------------------------------------------- the stack's Keycloak (A25)

export const KEYCLOAK_ISSUER = process.env.APIPAY_IDP_ISSUER || 'http://127.0.0.1:8180/realms/apipay';
/** APIPAY_IDP=0: a machine without the stack's Keycloak; the tests that need it say so and are skipped. */
export const KEYCLOAK_ENABLED = process.env.APIPAY_IDP !== '0';

interface RealmUser {
  id: string;
  username: string;
  credentials: Array<{ type: string; value?: string; secretData?: string }>;
}
const realm = JSON.parse(readFileSync(new URL('../../scripts/stack/keycloak-realm.json', import.meta.url), 'utf8')) as {
  users: RealmUser[];
};

/** A demo person of the realm: their subject, password and TOTP key (the raw secret's bytes, as Keycloak keeps it). */
export function demoPerson(username: string) {
  const user = realm.users.find((u) => u.username === username);
  if (!user) throw new Error(`no demo person ${username} in keycloak-realm.json`);
  const password = user.credentials.find((c) => c.type === 'password')!.value!;
  const otp = user.credentials.find((c) => c.type === 'otp');
  const otpSecret = otp ? (JSON.parse(otp.secretData!) as { value: string }).value : null;
  return { subject: user.id, password, otpSecret };
}

/**
 * A real access token of the stack's Keycloak for a demo person: password, and a TOTP code when they have one.
 * Keycloak accepts each code once, so a refusal (another test used this person's code of this 30 s window) waits for
 * the next window and tries again.
 */
export async function keycloakToken(username: string): Promise<string> {
  const person = demoPerson(username);
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const form = new URLSearchParams({
      grant_type: 'password',
      client_id: 'apipay-tests',
      username,
      password: person.password,
      scope: 'openid',
    });
    if (person.otpSecret) form.set('totp', await generate({ secret: new TextEncoder().encode(person.otpSecret) }));
    const res = await fetch(`${KEYCLOAK_ISSUER}/protocol/openid-connect/token`, { method: 'POST', body: form });
    const body = (await res.json()) as { access_token?: string; error_description?: string };
    if (res.ok && body.access_token) return body.access_token;
    last = `${res.status} ${body.error_description ?? ''}`;
    if (!person.otpSecret) break;
    await new Promise((resolve) => setTimeout(resolve, 30_000 - (Date.now() % 30_000) + 500));
  }
  throw new Error(`Keycloak direct grant for ${username}: ${last}`);
}
