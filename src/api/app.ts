// The HTTP surface of the API process: health, metrics (unless on their own listener, R6), the provider ingress and
// the admin API, the operator console and the merchant portal (C1, C2), in one Hono app; R18: a span per request.
import { Hono } from 'hono';
import { accessRules } from './admin/access.js';
import { createAdminApp } from './admin/index.js';
import { createConsoleApps } from './console/index.js';
import type { ApiDeps } from './deps.js';
import { errorBody, handleError } from './errors.js';
import { registerHealth } from './health.js';
import { registerIngress } from './ingress/index.js';
import { registerMetrics } from './metrics.js';
import { clientOrigin } from './middleware/client-address.js';
import { requestId } from './middleware/request-id.js';
import { traceRequests } from './middleware/trace.js';
import { createApiServices } from './services.js';

export function createApp(deps: ApiDeps): Hono {
  const app = new Hono();
  app.use('*', traceRequests()); // R18: the request's server span
  app.use('*', requestId());
  app.use('*', clientOrigin(deps.profile.http)); // A23: the client behind the trusted proxies, and whether it used https
  app.use('*', async (c, next) => {
    c.set('logger' as never, deps.logger as never);
    await next();
  });
  registerHealth(app, deps);
  if (deps.metricsOnPublicListener !== false) registerMetrics(app);
  registerIngress(app, deps);
  const services = createApiServices(deps);
  const admin = createAdminApp(deps, services);
  app.route('/admin/v1', admin);
  // C1, C2: the console and the portal, on the admin API's services and its routes' access rules.
  const pages = createConsoleApps(deps, services, () => accessRules(admin));
  app.route('/console', pages.console);
  app.route('/portal', pages.portal);
  app.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}
