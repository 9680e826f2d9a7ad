// The request context of the console and portal pages (C1, C2), the one error they throw, and the role check that
// reuses the admin route's declared access rule, so a page allows exactly what the admin API allows.
import type { Context } from 'hono';
import { html } from 'hono/html';
import { allows, type Access, type Principal } from '../../access/roles.js';
import type { AppEnv } from '../context.js';
import { ApiError } from '../errors.js';
import { layout, type View } from './html.js';
import type { Session } from './session.js';

export interface ConsoleEnv {
  Variables: AppEnv['Variables'] & {
    view: View;
    session: Session;
    /** The fields of a POSTed form (checked for its CSRF token before any route sees them). */
    form: Record<string, string>;
    /** Every value of each field of that form, in order (a field repeated, like the checkboxes of C16). */
    formLists: Record<string, string[]>;
  };
}

export type ConsoleContext = Context<ConsoleEnv>;

/** A page that cannot be shown: rendered as an HTML page with this status and message (never internals). */
export class PageError extends Error {
  override name = 'PageError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 429 | 500 | 503,
    message: string,
  ) {
    super(message);
  }
}

/** The signed-in principal; the auth middleware has already sent everyone else to the sign-in page. */
export function principalOf(c: ConsoleContext): Principal {
  const principal = c.get('view').principal;
  if (!principal) throw new PageError(401, 'sign in first');
  return principal;
}

/** The rules of the admin routes, by `METHOD /path` (see api/admin/access.ts): a page names the route it stands for. */
export type AccessRules = () => Map<string, Access>;

export function requireAccess(c: ConsoleContext, rules: AccessRules, route: string): Principal {
  const principal = principalOf(c);
  const rule = rules().get(route);
  if (!rule) throw new Error(`console page uses ${route}, which declares no access rule`); // programming error: 500
  if (!allows(rule, principal)) throw new PageError(403, `role ${principal.role} may not do this (requires ${rule.role})`);
  return principal;
}

export function mayDo(c: ConsoleContext, rules: AccessRules, route: string): boolean {
  const rule = rules().get(route);
  const principal = c.get('view').principal;
  return Boolean(rule && principal && allows(rule, principal));
}

/** The onError of both surfaces: known refusals keep their status; anything else is a 500 without internals. */
export function renderError(error: Error, c: ConsoleContext): Response | Promise<Response> {
  let status: PageError['status'] = 500;
  let message = 'internal error';
  if (error instanceof PageError) ({ status, message } = error);
  else if (error instanceof ApiError && [400, 401, 403, 404, 409, 429, 503].includes(error.status)) {
    status = error.status as PageError['status'];
    message = error.message;
  } else c.get('logger')?.error({ err: error, requestId: c.get('requestId') }, 'console page failed');
  const view = c.get('view') ?? { surface: 'console', base: '/console', csrf: '', temporal: { url: '', namespace: '' } };
  const back = view.principal
    ? html`<p><a href="${view.base}">Back</a></p>`
    : html`<p><a href="${view.base}/sign-in">Sign in</a></p>`;
  return c.html(
    layout(
      view,
      status === 404 ? 'Not found' : status === 403 ? 'Refused' : 'Error',
      html`<p class="notice error">${message}</p>
        ${back}`,
    ),
    status,
  );
}
