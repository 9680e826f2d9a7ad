// The operator console at /console (C1) and the merchant portal at /portal (C2): server-rendered pages on the API
// process over the admin API's services, one Hono app per surface with its own cookie and the same pages (the
// portal without the inbound ones). Every page checks the role of the admin route it stands for.
import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ApiDeps } from '../deps.js';
import type { ApiServices } from '../services.js';
import { createConsoleOidc } from '../../access/idp-oidc.js';
import type { AuthOptions } from './auth-session.js';
import { sessionMiddleware } from './auth.js';
import { registerSignIn } from './sign-in.js';
import { registerOidcSignIn } from './oidc.js';
import { PageError, renderError, type AccessRules, type ConsoleEnv } from './context.js';
import { registerBacklogPage } from './backlog.js';
import { registerLedgerPage } from './charts/ledger-page.js';
import { registerPortalHome } from './charts/portal-home.js';
import { CHART_STYLESHEET } from './charts/svg.js';
import { registerDeliveryPages } from './deliveries.js';
import { registerEndpointEdit } from './endpoint-edit.js';
import { registerEndpointForm } from './endpoint-form.js';
import { registerEndpointPages } from './endpoints.js';
import { registerEventPages } from './events.js';
import { registerEventTypePages } from './event-types.js';
import { STYLESHEET } from './html.js';
import { liveCounter, registerLiveStreams, type LiveOptions } from './live.js';
import { SCRIPT } from './script.js';
import { registerAdjustmentPages } from './adjustments.js';
import { registerBulkActions } from './bulk.js';
import { registerReviewApproval } from './review-approval.js';
import { registerReviewPages } from './reviews.js';
import { createConsoleServices } from './services.js';
import { createSessionKeys, type Surface } from './session.js';

/** A signed-in session lasts a working day at most; its row and the key behind it are re-checked on every request (A16). */
export const SESSION_TTL_SECONDS = 8 * 3600;

export function createConsoleApps(
  deps: ApiDeps,
  api: ApiServices,
  adminRules: AccessRules,
  live: LiveOptions = {},
): Record<Surface, Hono<ConsoleEnv>> {
  const counter = liveCounter(live.maxOpen);
  let rules: ReturnType<AccessRules> | undefined;
  const services = createConsoleServices(deps, api, () => (rules ??= adminRules()));
  const sessions = createSessionKeys(deps.env.SECRETS_ENCRYPTION_KEY, deps.now);
  const temporal = {
    url: (deps.env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233').replace(/\/+$/, ''),
    namespace: deps.env.TEMPORAL_NAMESPACE ?? 'default',
  };

  // A30: the console signs people in through the IdP when the idp block names its console client.
  const oidc = deps.profile.idp?.console ? createConsoleOidc(deps.profile.idp) : undefined;

  const build = (surface: Surface) => {
    const base = surface === 'console' ? '/console' : '/portal';
    const options: AuthOptions = {
      surface,
      base,
      sessions,
      keys: services.keys,
      store: api.sessions,
      links: api.portalLinks,
      throttle: api.throttle,
      secureCookies: Boolean(deps.profile.http.public_url?.startsWith('https:')) || deps.env.NODE_ENV === 'production',
      now: deps.now ?? (() => new Date()),
      // A28: with an IdP in production ADMIN_TOKEN signs nobody in: a random stand-in no request can know.
      adminToken:
        deps.profile.idp && deps.env.NODE_ENV === 'production' ? randomBytes(32).toString('base64url') : deps.env.ADMIN_TOKEN,
      temporal,
      ttlSeconds: SESSION_TTL_SECONDS,
      idpSignIn: surface === 'console' && oidc !== undefined,
    };
    const app = new Hono<ConsoleEnv>();
    app.get('/assets/console.css', (c) =>
      c.body(STYLESHEET + CHART_STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=3600' }),
    );
    // C14, C15: the one script (copy buttons, live regions); the CSP allows scripts from 'self' only, none inline.
    app.get('/assets/console.js', (c) =>
      c.body(SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'max-age=3600' }),
    );
    // A page's form is a few fields: anything larger is refused before it is read, answered 413.
    app.use('*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.text('form too large', 413) }));
    app.use('*', sessionMiddleware(options));
    registerSignIn(app, options);
    if (surface === 'console' && oidc) registerOidcSignIn(app, options, oidc, deps.profile.http.public_url); // A30
    if (surface === 'console') app.get('/', (c) => c.redirect(`${base}/reviews`, 303));
    else registerPortalHome(app, services); // C13: the portal opens on the merchant's health
    if (surface === 'console') {
      registerReviewPages(app, services);
      registerReviewApproval(app, services); // A5, A30
      registerBacklogPage(app, services);
      registerLedgerPage(app, services);
      registerAdjustmentPages(app, services); // A5, A30: adjustments waiting for a second person
    }
    registerBulkActions(app, services); // before /deliveries/:id, whose pattern would take /deliveries.csv's place
    registerDeliveryPages(app, services);
    registerLiveStreams(app, services, { ...live, surface, counter });
    registerEndpointForm(app, services); // M11; before /endpoints/:id, whose pattern would take /endpoints/new
    registerEndpointEdit(app, services); // M11: an endpoint's destination settings
    registerEndpointPages(app, services);
    registerEventPages(app, services);
    registerEventTypePages(app, services); // M8
    // A catch-all route, not notFound: a mounted app's notFound is not used by the parent (Hono's app.route).
    app.all('*', () => {
      throw new PageError(404, 'no such page');
    });
    app.onError(renderError);
    return app;
  };
  return { console: build('console'), portal: build('portal') };
}
