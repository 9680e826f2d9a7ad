// The session middleware, sessions and CSRF for the console and the portal (C1, C2, A15, A16). The cookie is HttpOnly,
// SameSite=Strict, Secure over https (A23: always with an https public_url or NODE_ENV=production, else when a
// trusted proxy says the client used https), scoped to its surface's path, and holds a signed session (session.ts)
// whose id names a server-side row (console_sessions): sign-out, a revoked key or link and a changed role end that
// row, so a copied cookie stops working at once. Every POST must carry the session's CSRF token (403 otherwise), the
// sign-in form included (it has an anonymous session for that). A portal link is opened by a POST from its
// confirmation page (never by the GET a link preview or another site can make), once. A23: a right key or a link
// that opens is never refused for its address's failed sign-ins (the bootstrap token is, from a throttled address).
// A30: with the idp block's console client, people sign in through the IdP (oidc.ts) into the same sessions.
// The sessions themselves are in auth-session.ts, the sign-in routes in sign-in.ts.
import { getCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import type { Principal } from '../../access/roles.js';
import { clientRequestIdOf, cookieName, OPEN_PATHS, principalFor, startSession, type AuthOptions } from './auth-session.js';
import { PageError, type ConsoleEnv } from './context.js';

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
