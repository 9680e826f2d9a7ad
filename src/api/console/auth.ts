// Sign-in, sessions and CSRF for the console and the portal (C1, C2). The cookie is HttpOnly, SameSite=Strict, Secure
// over https, scoped to its surface's path, and holds a signed session (session.ts); the key it names is checked on
// every request, so a revoked key is signed out at once. Every POST must carry the session's CSRF token (403
// otherwise), the sign-in form included (it has an anonymous session for that).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { html } from 'hono/html';
import type { ApiKeyService } from '../../access/api-keys.js';
import { BOOTSTRAP_PRINCIPAL, type Principal } from '../../access/roles.js';
import { PageError, type ConsoleContext, type ConsoleEnv } from './context.js';
import { csrfField, layout, notice, type View } from './html.js';
import type { Session, SessionKeys, SessionSubject, Surface } from './session.js';

export interface AuthOptions {
  surface: Surface;
  base: View['base'];
  sessions: SessionKeys;
  keys: ApiKeyService;
  adminToken: string;
  temporal: View['temporal'];
  /** Session lifetime after a sign-in with a key (the link's sessions end with the link's own lifetime or this). */
  ttlSeconds: number;
}

const cookieName = (surface: Surface) => `apipay_${surface}`;
const digest = (value: string) => createHash('sha256').update(value).digest();
/** Paths served without a principal: the sign-in form, the portal link's entry, the stylesheet. */
const OPEN_PATHS = ['/sign-in', '/enter', '/assets/console.css'];

/** Who a session stands for now, or undefined (revoked key, changed ADMIN_TOKEN, or the other surface's kind). */
async function principalFor(subject: SessionSubject, o: AuthOptions): Promise<Principal | undefined> {
  let principal: Principal | undefined;
  if (subject.kind === 'key') principal = await o.keys.active(subject.keyId);
  else if (subject.kind === 'bootstrap')
    principal = subject.fingerprint === o.sessions.fingerprint(o.adminToken) ? BOOTSTRAP_PRINCIPAL : undefined;
  else if (subject.kind === 'link')
    principal = {
      keyId: `portal-link:${subject.linkId}`,
      name: 'portal link',
      role: 'merchant',
      merchantAccount: subject.merchantAccount,
    };
  return principal && fits(o.surface, principal) ? principal : undefined;
}

/** The console is for staff roles, the portal for one merchant account. */
const fits = (surface: Surface, p: Principal) => (surface === 'console' ? p.role !== 'merchant' : p.role === 'merchant');

/** Sets a new session's cookie: a new session id on every sign-in, so an anonymous one is never promoted (fixation). */
function startSession(c: ConsoleContext, o: AuthOptions, subject: SessionSubject, ttl: number): Session {
  const { session, cookie } = o.sessions.issue(o.surface, subject, ttl);
  setCookie(c, cookieName(o.surface), cookie, {
    httpOnly: true,
    sameSite: 'Strict',
    secure: new URL(c.req.url).protocol === 'https:',
    path: o.base,
    maxAge: ttl,
  });
  return session;
}

export function sessionMiddleware(o: AuthOptions) {
  return createMiddleware<ConsoleEnv>(async (c, next) => {
    c.header(
      'Content-Security-Policy',
      "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer'); // a portal link's token never leaves in a Referer
    c.header('Cache-Control', 'no-store');
    const path = c.req.path.slice(o.base.length) || '/';

    let session = o.sessions.read(o.surface, getCookie(c, cookieName(o.surface)));
    const principal = session ? await principalFor(session.subject, o) : undefined;
    if (session && session.subject.kind !== 'anonymous' && !principal) session = undefined; // signed out (revoked, …)
    session ??= startSession(c, o, { kind: 'anonymous' }, 3600);
    c.set('session', session);
    c.set('view', {
      surface: o.surface,
      base: o.base,
      csrf: o.sessions.csrfToken(session),
      temporal: o.temporal,
      ...(principal ? { principal: { ...principal, requestId: c.get('requestId') } } : {}), // A3: audited with it
    });

    if (c.req.method === 'POST') {
      const form: Record<string, string> = {};
      const body = await c.req.parseBody().catch(() => ({}));
      for (const [k, v] of Object.entries(body)) if (typeof v === 'string') form[k] = v;
      if (!o.sessions.checkCsrf(session, form.csrf))
        throw new PageError(
          403,
          'this form has expired or did not come from this page (missing or wrong CSRF token); reload the page and try again',
        );
      c.set('form', form);
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
    let subject: SessionSubject | undefined;
    let principal: Principal | undefined;
    if (token.startsWith('apk_')) {
      principal = await o.keys.authenticate(token);
      if (principal) subject = { kind: 'key', keyId: principal.keyId };
    } else if (o.surface === 'console' && token && timingSafeEqual(digest(token), bootstrap)) {
      principal = BOOTSTRAP_PRINCIPAL;
      subject = { kind: 'bootstrap', fingerprint: o.sessions.fingerprint(o.adminToken) };
    }
    if (!principal || !subject || !fits(o.surface, principal)) {
      const hint = principal
        ? o.surface === 'console'
          ? 'a merchant key opens /portal, not the console'
          : 'staff keys use /console'
        : 'unknown or revoked key';
      return c.html(signInPage(c.get('view'), `Not signed in: ${hint}.`), 401);
    }
    startSession(c, o, subject, o.ttlSeconds);
    return c.redirect(o.base, 303);
  });

  app.post('/sign-out', (c) => {
    deleteCookie(c, cookieName(o.surface), { path: o.base });
    return c.redirect(`${o.base}/sign-in`, 303);
  });

  if (o.surface !== 'portal') return;
  app.get('/enter', (c) => {
    const link = o.sessions.readPortalLink(c.req.query('token'));
    if (!link) throw new PageError(401, 'this portal link is invalid or has expired; ask for a new one');
    startSession(c, o, { kind: 'link', merchantAccount: link.merchantAccount, linkId: link.linkId }, o.ttlSeconds);
    // A page, not a redirect: a SameSite=Strict cookie set while following a link from another site is only sent
    // on the next same-site navigation, which this page's link (and refresh) is.
    return c.html(
      html`<!doctype html>
        <html lang="en">
          <head>
            <meta charset="utf-8" />
            <meta http-equiv="refresh" content="0;url=${o.base}/deliveries" />
            <title>ApiPay portal</title>
          </head>
          <body>
            <p>Signed in to the portal of ${link.merchantAccount}. <a href="${o.base}/deliveries">Continue</a></p>
          </body>
        </html>`,
    );
  });
}
