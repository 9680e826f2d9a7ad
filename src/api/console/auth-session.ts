// The console's and portal's sessions (C1, C2, A15, A16, A23, A30): the options both surfaces' auth takes, who a
// session stands for now (a key, the bootstrap token, an IdP sign-in or a portal link capped at its minter's role),
// and the cookie a new session is issued in (HttpOnly, SameSite=Strict, Secure over https, a new id on every sign-in).
// Used by the session middleware (auth.ts), the sign-in routes (sign-in.ts) and the IdP sign-in (oidc.ts).
import { createHash } from 'node:crypto';
import { setCookie } from 'hono/cookie';
import type { ApiKeyService } from '../../access/api-keys.js';
import type { ConsoleSessionStore } from '../../access/console-sessions.js';
import { linkPrincipal, type PortalLinkService } from '../../access/portal-links.js';
import { BOOTSTRAP_KEY_ID, BOOTSTRAP_PRINCIPAL, type Principal, type StaffRole } from '../../access/roles.js';
import type { CredentialThrottle } from '../middleware/credential-throttle.js';
import { clientOf } from '../middleware/client-address.js';
import type { ConsoleContext } from './context.js';
import type { View } from './html.js';
import type { Session, SessionKeys, SessionSubject, Surface } from './session.js';

export interface AuthOptions {
  surface: Surface;
  base: View['base'];
  sessions: SessionKeys;
  keys: ApiKeyService;
  /** A16: the open sessions. */
  store: ConsoleSessionStore;
  /** A15: the links' rows (single use, revocation, audit). */
  links: PortalLinkService;
  /** A17, A23: failed sign-ins count against the client address and the key's id (a right one is never refused). */
  throttle: CredentialThrottle;
  /** A23: every cookie is Secure (an https public_url, or NODE_ENV=production), not only those of https requests. */
  secureCookies: boolean;
  now: () => Date;
  adminToken: string;
  temporal: View['temporal'];
  /** Session lifetime after a sign-in with a key (the link's sessions end with the link's own lifetime or this). */
  ttlSeconds: number;
  /** A30: the console offers the identity provider's sign-in (GET /login). */
  idpSignIn?: boolean;
}

/** A24: the client's own X-Request-Id, kept beside the server's in audit rows. */
export const clientRequestIdOf = (c: { get: (key: never) => unknown }) => {
  const id = c.get('clientRequestId' as never) as string | undefined;
  return id ? { clientRequestId: id } : {};
};
export const cookieName = (surface: Surface) => `apipay_${surface}`;
export const digest = (value: string) => createHash('sha256').update(value).digest();
/** Paths served without a principal: the sign-in form, the portal link's entry, the stylesheet. */
export const OPEN_PATHS = ['/sign-in', '/enter', '/login', '/oidc/callback', '/assets/console.css', '/assets/console.js'];

type Current = NonNullable<Awaited<ReturnType<ConsoleSessionStore['current']>>>;

/** The staff principal behind a key id (or the bootstrap token), if it still works. */
async function staffOf(keyId: string, o: AuthOptions, fingerprint?: string): Promise<Principal | undefined> {
  if (keyId === BOOTSTRAP_KEY_ID)
    return fingerprint === undefined || fingerprint === o.sessions.fingerprint(o.adminToken) ? BOOTSTRAP_PRINCIPAL : undefined;
  return o.keys.active(keyId);
}

/**
 * Who a session stands for now, or undefined (revoked key or link, changed ADMIN_TOKEN, the other surface's kind).
 * `role` is what must still equal the role the session began with (a link's: its minter's role).
 */
export async function principalFor(
  subject: SessionSubject,
  row: Current,
  o: AuthOptions,
): Promise<{ principal: Principal; role: string } | undefined> {
  let found: { principal: Principal; role: string } | undefined;
  if (subject.kind === 'key' && row.session.keyId === subject.keyId) {
    const principal = await o.keys.active(subject.keyId);
    if (principal) found = { principal, role: principal.role };
  } else if (subject.kind === 'idp' && row.session.keyId === subject.keyId && row.session.idpPrincipal) {
    const principal = row.session.idpPrincipal as unknown as Principal; // A30: who the ID token named
    found = { principal, role: principal.role };
  } else if (subject.kind === 'bootstrap') {
    if (subject.fingerprint === o.sessions.fingerprint(o.adminToken)) found = { principal: BOOTSTRAP_PRINCIPAL, role: 'admin' };
  } else if (subject.kind === 'link' && row.link && row.link.id === subject.linkId) {
    // A15: the minter must still be there, with the role it minted with; the session can do no more than it.
    const minter = await staffOf(row.link.createdBy, o);
    if (minter && (minter.role === 'operator' || minter.role === 'admin'))
      found = { principal: linkPrincipal(row.link, minter.role as StaffRole), role: minter.role };
  }
  return found && fits(o.surface, found.principal) ? found : undefined;
}

/** The console is for staff roles, the portal for one merchant account. */
export const fits = (surface: Surface, p: Principal) => (surface === 'console' ? p.role !== 'merchant' : p.role === 'merchant');

/** No session outlives a working day (a link's ends with the link). */
export const MAX_SESSION_SECONDS = 8 * 3600;

/** Sets a new session's cookie: a new session id on every sign-in, so an anonymous one is never promoted (fixation). */
export async function startSession(
  c: ConsoleContext,
  o: AuthOptions,
  subject: SessionSubject,
  ttl: number,
  row?: { keyId: string; role: string; portalLinkId?: string; idpPrincipal?: Principal },
): Promise<Session> {
  const { session, cookie } = o.sessions.issue(o.surface, subject, ttl);
  if (row && subject.kind !== 'anonymous')
    await o.store.open({
      id: session.sid,
      surface: o.surface,
      subject: subject.kind,
      ...row,
      expiresAt: new Date(session.exp * 1000),
    });
  setCookie(c, cookieName(o.surface), cookie, {
    httpOnly: true,
    sameSite: 'Strict',
    secure: o.secureCookies || clientOf(c).https || new URL(c.req.url).protocol === 'https:',
    path: o.base,
    maxAge: ttl,
  });
  return session;
}
