// Signed sessions of the console and the portal (C1, C2, A16), CSRF tokens bound to them, and the portal's signed
// links (A15). A cookie holds what it stands for (an API key id, the bootstrap token's fingerprint, or a merchant
// account entered by link), a random session id and an expiry, HMAC-signed with a key derived from
// SECRETS_ENCRYPTION_KEY. It never holds a credential: the key it names is looked up again on every request, and a
// signed-in session's id must name an open row of console_sessions (src/access/console-sessions.ts).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type Surface = 'console' | 'portal';

/** Who a session stands for: nobody yet (the sign-in form's CSRF), an API key, the bootstrap token, or a portal link. */
export type SessionSubject =
  | { kind: 'anonymous' }
  | { kind: 'key'; keyId: string }
  | { kind: 'bootstrap'; fingerprint: string }
  | { kind: 'link'; merchantAccount: string; linkId: string }
  /** A30: a person of the identity provider (idp:<sub>@<issuer>); who they are is in the session's row. */
  | { kind: 'idp'; keyId: string };

export interface Session {
  surface: Surface;
  subject: SessionSubject;
  /** Random, per sign-in: the CSRF token is derived from it. */
  sid: string;
  /** Unix seconds. */
  exp: number;
}

export interface PortalLink {
  merchantAccount: string;
  linkId: string;
  exp: number;
}

const b64 = (value: Buffer | string) => Buffer.from(value).toString('base64url');
const unb64 = (value: string) => Buffer.from(value, 'base64url').toString('utf8');

/** The signing functions over one server key; `purpose` keeps a portal link from ever passing as a session. */
export function createSessionKeys(secretsEncryptionKey: string, now: () => Date = () => new Date()) {
  // A key of its own for sessions: a cookie's MAC never uses the key that seals endpoint secrets directly.
  const key = createHmac('sha256', Buffer.from(secretsEncryptionKey, 'base64')).update('apipay console session key v1').digest();
  const mac = (purpose: string, text: string) => createHmac('sha256', key).update(`${purpose}\n${text}`).digest();
  const nowSeconds = () => Math.floor(now().getTime() / 1000);

  function seal(purpose: string, payload: object): string {
    const body = b64(JSON.stringify(payload));
    return `${body}.${b64(mac(purpose, body))}`;
  }

  function open(purpose: string, token: string | undefined): unknown {
    if (!token || token.length > 2048) return undefined;
    const [body, signature, extra] = token.split('.');
    if (!body || !signature || extra !== undefined) return undefined;
    const expected = mac(purpose, body);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const payload = JSON.parse(unb64(body)) as { exp?: unknown };
      return typeof payload.exp === 'number' && payload.exp > nowSeconds() ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    /** A new session for `subject`, valid for `ttlSeconds`. */
    issue(surface: Surface, subject: SessionSubject, ttlSeconds: number): { session: Session; cookie: string } {
      const session: Session = { surface, subject, sid: b64(randomBytes(18)), exp: nowSeconds() + ttlSeconds };
      return { session, cookie: seal(`session:${surface}`, session) };
    },
    /** The session a cookie holds, or undefined when it is forged, of the other surface, or expired. */
    read(surface: Surface, cookie: string | undefined): Session | undefined {
      const payload = open(`session:${surface}`, cookie) as Session | undefined;
      return payload?.surface === surface ? payload : undefined;
    },
    /** The synchronizer token of a session: every form carries it, every POST must return it. */
    csrfToken: (session: Session) => b64(mac('csrf', session.sid)),
    checkCsrf(session: Session, token: string | undefined): boolean {
      if (!token) return false;
      const expected = mac('csrf', session.sid);
      const given = Buffer.from(token, 'base64url');
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
    /** Ties a bootstrap session to the current ADMIN_TOKEN: changing the token signs those sessions out. */
    fingerprint: (adminToken: string) => b64(mac('bootstrap', adminToken)).slice(0, 22),
    /** A link's token; `linkId` names its row (A15: the row says whether it was used or revoked). */
    portalLink(merchantAccount: string, ttlSeconds: number, linkId = b64(randomBytes(12))): { token: string; link: PortalLink } {
      const link: PortalLink = { merchantAccount, linkId, exp: nowSeconds() + ttlSeconds };
      return { token: seal('portal-link', link), link };
    },
    /** A30: the OpenID Connect sign-in under way (state, nonce, PKCE verifier), for its callback; 10 minutes. */
    pendingSignIn: (pending: object) => seal('oidc-pending', { ...pending, exp: nowSeconds() + 600 }),
    readPendingSignIn: (token: string | undefined) => open('oidc-pending', token) as Record<string, unknown> | undefined,
    readPortalLink(token: string | undefined): PortalLink | undefined {
      const payload = open('portal-link', token) as PortalLink | undefined;
      return payload && typeof payload.merchantAccount === 'string' ? payload : undefined;
    },
  };
}

export type SessionKeys = ReturnType<typeof createSessionKeys>;
