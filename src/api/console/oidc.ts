// A30: the console's sign-in through the identity provider (src/access/idp-oidc.ts: authorization code + PKCE by
// openid-client). GET /login sends the browser to the IdP with a state, a nonce and a PKCE challenge kept in a
// signed, HttpOnly, 10-minute cookie (SameSite=Lax: the IdP's redirect back is a cross-site navigation); GET
// /login?step_up=1 asks for a fresh sign-in with the second factor (A27). GET /oidc/callback checks them, opens the
// usual server-side session for the IdP person (a new session id; the cookie stays HttpOnly, SameSite=Strict, Secure
// over https) and returns to the page through a same-site refresh, so the Strict cookie goes with it.
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { html } from 'hono/html';
import { IdpSignInError, type ConsoleOidc, type PendingSignIn } from '../../access/idp-oidc.js';
import { clientOf } from '../middleware/client-address.js';
import { startSession, type AuthOptions } from './auth-session.js';
import { PageError, type ConsoleEnv } from './context.js';
import { layout } from './html.js';

const PENDING_COOKIE = 'apipay_console_oidc';

/** Only a path of this surface (no scheme, no host, no `//`): the return address is never another site. */
export function safeReturn(base: string, wanted: string | undefined): string {
  if (!wanted || !wanted.startsWith(`${base}/`) || /[\\\s]|\/\/|^[^/]/.test(wanted)) return `${base}/reviews`;
  return wanted;
}

export function registerOidcSignIn(
  app: Hono<ConsoleEnv>,
  o: AuthOptions,
  oidc: ConsoleOidc,
  /** The public origin (profile http.public_url) the IdP sends the browser back to; else the request's. */
  publicUrl: string | undefined,
): void {
  const callbackOf = (requestUrl: string) =>
    `${(publicUrl ?? new URL(requestUrl).origin).replace(/\/+$/, '')}${o.base}/oidc/callback`;
  const secure = (c: Parameters<typeof clientOf>[0]) =>
    o.secureCookies || clientOf(c).https || new URL(c.req.url).protocol === 'https:';
  const unreachable = (error: unknown): never => {
    if (error instanceof IdpSignInError && error.unavailable)
      throw new PageError(503, 'The identity provider cannot be reached; try again in a minute.');
    throw error;
  };

  app.get('/login', async (c) => {
    const returnTo = safeReturn(o.base, c.req.query('return'));
    const stepUp = c.req.query('step_up') === '1';
    const { url, pending } = await oidc.start(callbackOf(c.req.url), returnTo, stepUp).catch(unreachable);
    setCookie(c, PENDING_COOKIE, o.sessions.pendingSignIn(pending), {
      httpOnly: true,
      sameSite: 'Lax',
      secure: secure(c),
      path: `${o.base}/oidc`,
      maxAge: 600,
    });
    return c.redirect(url, 303);
  });

  app.get('/oidc/callback', async (c) => {
    const pending = o.sessions.readPendingSignIn(getCookie(c, PENDING_COOKIE)) as PendingSignIn | undefined;
    deleteCookie(c, PENDING_COOKIE, { path: `${o.base}/oidc` });
    if (!pending) throw new PageError(400, 'This sign-in has expired or was not started here; sign in again.');
    const callback = new URL(callbackOf(c.req.url));
    callback.search = new URL(c.req.url).search;
    const verdict = await oidc.finish(callback, pending).catch(unreachable);
    if (!verdict.ok) throw new PageError(401, `Not signed in: ${verdict.problem}.`);
    const { principal } = verdict;
    if (principal.role === 'merchant') throw new PageError(403, 'Merchant people sign in to /portal, not the console.');
    const previous = c.get('session');
    if (previous.subject.kind !== 'anonymous') await o.store.end(previous.sid, 'signed_out'); // step-up: a new session
    await startSession(c, o, { kind: 'idp', keyId: principal.keyId }, o.ttlSeconds, {
      keyId: principal.keyId,
      role: principal.role,
      idpPrincipal: principal,
    });
    // A same-site page load carries the new SameSite=Strict cookie; the IdP's cross-site redirect chain would not.
    return c.html(
      layout(
        c.get('view'),
        'Signed in',
        html`<meta http-equiv="refresh" content="0;url=${pending.returnTo}" />
          <p class="panel">Signed in as ${principal.name}. <a href="${pending.returnTo}" id="continue">Continue</a></p>`,
      ),
    );
  });
}
