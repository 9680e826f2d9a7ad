// Sign-in, sessions and CSRF for the console and the portal (C1, C2, A15, A16). The cookie is HttpOnly,
// SameSite=Strict, Secure over https (A23: always with an https public_url or NODE_ENV=production, else when a
// trusted proxy says the client used https), scoped to its surface's path, and holds a signed session (session.ts)
// whose id names a server-side row (console_sessions): sign-out, a revoked key or link and a changed role end that
// row, so a copied cookie stops working at once. Every POST must carry the session's CSRF token (403 otherwise), the
// sign-in form included (it has an anonymous session for that). A portal link is opened by a POST from its
// confirmation page (never by the GET a link preview or another site can make), once. A23: a right key or a link
// that opens is never refused for its address's failed sign-ins (the bootstrap token is, from a throttled address).
// A30: with the idp block's console client, people sign in through the IdP (oidc.ts) into the same sessions.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { html } from 'hono/html';
import type { ApiKeyService } from '../../access/api-keys.js';
import type { ConsoleSessionStore } from '../../access/console-sessions.js';
import { linkPrincipal, type PortalLinkService } from '../../access/portal-links.js';
import { BOOTSTRAP_KEY_ID, BOOTSTRAP_PRINCIPAL, type Principal, type StaffRole } from '../../access/roles.js';
import type { CredentialThrottle } from '../middleware/credential-throttle.js';
import { clientAddress, clientOf } from '../middleware/client-address.js';
import { PageError, type ConsoleContext, type ConsoleEnv } from './context.js';
import { csrfField, layout, notice, type View } from './html.js';
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
const clientRequestIdOf = (c: { get: (key: never) => unknown }) => {
  const id = c.get('clientRequestId' as never) as string | undefined;
  return id ? { clientRequestId: id } : {};
};
const cookieName = (surface: Surface) => `apipay_${surface}`;
const digest = (value: string) => createHash('sha256').update(value).digest();
/** Paths served without a principal: the sign-in form, the portal link's entry, the stylesheet. */
const OPEN_PATHS = ['/sign-in', '/enter', '/login', '/oidc/callback', '/assets/console.css', '/assets/console.js'];

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
async function principalFor(
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
const fits = (surface: Surface, p: Principal) => (surface === 'console' ? p.role !== 'merchant' : p.role === 'merchant');

/** No session outlives a working day (a link's ends with the link). */
const MAX_SESSION_SECONDS = 8 * 3600;

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

export function sessionMiddleware(o: AuthOptions) {
  return createMiddleware<ConsoleEnv>(async (c, next) => {
    c.header(
      'Content-Security-Policy',
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer'); // a portal link's token never leaves in a Referer
    c.header('Cache-Control', 'no-store');
    const path = c.req.path.slice(o.base.length) || '/';

    let session = o.sessions.read(o.surface, getCookie(c, cookieName(o.surface)));
    let principal: Principal | undefined;
    if (session && session.subject.kind !== 'anonymous') {
      // A16: the row must be open; the principal must still work and hold the role it signed in with.
      const row = await o.store.current(session.sid);
      const found = row ? await principalFor(session.subject, row, o) : undefined;
      if (row && !found) await o.store.end(session.sid, 'credential_gone');
      else if (row && found && found.role !== row.session.role) await o.store.end(session.sid, 'role_changed');
      else if (found) principal = found.principal;
      if (!principal) session = undefined; // signed out (sign-out, revoked, expired, role changed, …)
    }
    session ??= await startSession(c, o, { kind: 'anonymous' }, 3600);
    c.set('session', session);
    c.set('view', {
      surface: o.surface,
      base: o.base,
      csrf: o.sessions.csrfToken(session),
      temporal: o.temporal,
      ...(principal ? { principal: { ...principal, requestId: c.get('requestId'), ...clientRequestIdOf(c) } } : {}), // A3, A24
    });

    if (c.req.method === 'POST') {
      const form: Record<string, string> = {};
      const lists: Record<string, string[]> = {}; // C16: a field sent more than once (the selected rows' checkboxes)
      const body = await c.req.parseBody({ all: true }).catch(() => ({}));
      for (const [k, v] of Object.entries(body)) {
        const strings = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
        if (strings.length) form[k] = strings.at(-1)!;
        lists[k] = strings;
      }
      if (!o.sessions.checkCsrf(session, form.csrf))
        throw new PageError(
          403,
          'this form has expired or did not come from this page (missing or wrong CSRF token); reload the page and try again',
        );
      c.set('form', form);
      c.set('formLists', lists);
    }
    if (!principal && !OPEN_PATHS.includes(path)) {
      if (c.req.method === 'GET') return c.redirect(`${o.base}/sign-in`, 303);
      throw new PageError(401, 'sign in first');
    }
    return next();
  });
}

/** GET/POST sign-in, POST sign-out, and (portal) GET enter?token= for a signed link. */
export function registerSignIn(app: Hono<ConsoleEnv>, o: AuthOptions): void {
  const bootstrap = digest(o.adminToken);
  const signInPage = (view: View, error?: string) =>
    layout(
      view,
      'Sign in',
      html`${notice(error, 'error')}
        ${
          o.idpSignIn
            ? html`<p class="panel"><a href="${view.base}/login" id="idp-sign-in">Sign in with the identity provider</a></p>`
            : ''
        }
        <form method="post" action="${view.base}/sign-in" class="panel">
          ${csrfField(view)}
          <label
            >${o.surface === 'console' ? 'API key (apk_…) or the ADMIN_TOKEN' : 'Merchant API key (apk_…)'}
            <input type="password" name="token" autocomplete="off" required size="60" />
          </label>
          <p><button type="submit">Sign in</button></p>
        </form>
        ${o.surface === 'portal' ? html`<p class="muted">Or open the portal link your ApiPay contact sent you.</p>` : ''}`,
    );

  app.get('/sign-in', (c) => (c.get('view').principal ? c.redirect(o.base, 303) : c.html(signInPage(c.get('view')))));

  app.post('/sign-in', async (c) => {
    const token = (c.get('form').token ?? '').trim();
    const throttled = (wait: number) => {
      c.header('Retry-After', String(wait));
      return c.html(signInPage(c.get('view'), `Too many failed sign-ins; try again in ${wait} s.`), 429);
    };
    let subject: SessionSubject | undefined;
    let principal: Principal | undefined;
    if (token.startsWith('apk_')) {
      principal = await o.keys.authenticate(token);
      if (principal) subject = { kind: 'key', keyId: principal.keyId };
    } else if (
      o.surface === 'console' &&
      token &&
      timingSafeEqual(digest(token), bootstrap) &&
      (await o.throttle.blocked(clientAddress(c))) === undefined // A23: never through a throttled address
    ) {
      principal = BOOTSTRAP_PRINCIPAL;
      subject = { kind: 'bootstrap', fingerprint: o.sessions.fingerprint(o.adminToken) };
    }
    if (!principal || !subject || !fits(o.surface, principal)) {
      // A23: only a credential that did not verify counts (a merchant key on the console is a mistake, not a guess).
      const past = principal ? undefined : await o.throttle.failed(clientAddress(c), token);
      if (past !== undefined) return throttled(past);
      const hint = principal
        ? o.surface === 'console'
          ? 'a merchant key opens /portal, not the console'
          : 'staff keys use /console'
        : 'unknown or revoked key';
      return c.html(signInPage(c.get('view'), `Not signed in: ${hint}.`), 401);
    }
    await startSession(c, o, subject, o.ttlSeconds, { keyId: principal.keyId, role: principal.role });
    return c.redirect(o.base, 303);
  });

  app.post('/sign-out', async (c) => {
    const session = c.get('session');
    if (session.subject.kind !== 'anonymous') await o.store.end(session.sid, 'signed_out'); // A16: the copies too
    deleteCookie(c, cookieName(o.surface), { path: o.base });
    return c.redirect(`${o.base}/sign-in`, 303);
  });

  if (o.surface !== 'portal') return;
  const refused = () => new PageError(401, 'this portal link is invalid, expired, revoked or already used; ask for a new one');

  // A16: a GET never signs in (a link preview, a prefetch or another site's page can make it): it asks first.
  app.get('/enter', (c) => {
    const token = c.req.query('token');
    const link = o.sessions.readPortalLink(token);
    if (!link) throw refused();
    const view = c.get('view');
    return c.html(
      layout(
        view,
        'Open the portal',
        html`<form method="post" action="${o.base}/enter" class="panel">
          ${csrfField(view)}
          <input type="hidden" name="token" value="${token}" />
          <p>This link opens the ApiPay portal of <strong>${link.merchantAccount}</strong>, once.</p>
          <p><button type="submit">Open the portal</button></p>
        </form>`,
      ),
    );
  });

  app.post('/enter', async (c) => {
    const token = c.get('form').token ?? '';
    const signed = o.sessions.readPortalLink(token);
    const link = signed ? await o.links.use(signed.linkId, c.get('requestId')) : 'unknown';
    if (typeof link === 'string') {
      // A23: a link that opens is never refused; one that does not counts against the address.
      const wait = await o.throttle.failed(clientAddress(c), '');
      if (wait !== undefined) {
        c.header('Retry-After', String(wait));
        throw new PageError(429, `too many failed attempts from here; try again in ${wait} s`);
      }
      throw refused();
    }
    // A15: the session ends when the link would have (and within a working day whatever the link said).
    const ttl = Math.min(MAX_SESSION_SECONDS, Math.floor((link.expiresAt.getTime() - o.now().getTime()) / 1000));
    if (ttl < 1) throw refused();
    await startSession(c, o, { kind: 'link', merchantAccount: link.merchantAccount, linkId: link.id }, ttl, {
      keyId: link.createdBy,
      role: link.createdByRole,
      portalLinkId: link.id,
    });
    return c.redirect(`${o.base}/deliveries`, 303);
  });
}
