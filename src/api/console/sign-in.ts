// The sign-in routes of the console and the portal (C1, C2, A15, A16, A23): GET/POST sign-in with a key or the
// bootstrap token, POST sign-out (which ends the server-side row, so copies of the cookie stop too), and the portal
// link's entry, opened by a POST from its confirmation page (never by a GET), once. A23: a right key or a link that
// opens is never refused for its address's failed sign-ins (the bootstrap token is, from a throttled address).
import { timingSafeEqual } from 'node:crypto';
import type { Hono } from 'hono';
import { deleteCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { BOOTSTRAP_PRINCIPAL, type Principal } from '../../access/roles.js';
import { clientAddress } from '../middleware/client-address.js';
import { cookieName, digest, fits, MAX_SESSION_SECONDS, startSession, type AuthOptions } from './auth-session.js';
import { PageError, type ConsoleEnv } from './context.js';
import { csrfField, layout, notice, type View } from './html.js';
import type { SessionSubject } from './session.js';

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
