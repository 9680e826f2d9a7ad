// The HTTP surface of the API process: health, metrics (unless on their own listener, R6), the provider ingress and
// the admin API, in one Hono app.
import { Hono } from 'hono';
import { createAdminApp } from './admin/index.js';
import type { ApiDeps } from './deps.js';
import { errorBody, handleError } from './errors.js';
import { registerHealth } from './health.js';
import { registerIngress } from './ingress/index.js';
import { registerMetrics } from './metrics.js';
import { requestId } from './middleware/request-id.js';
import { createApiServices } from './services.js';

export function createApp(deps: ApiDeps): Hono {
  const app = new Hono();
  app.use('*', requestId());
  app.use('*', async (c, next) => {
    c.set('logger' as never, deps.logger as never);
    await next();
  });
  registerHealth(app, deps);
  if (deps.metricsOnPublicListener !== false) registerMetrics(app);
  registerIngress(app, deps);
  app.route('/admin/v1', createAdminApp(deps, createApiServices(deps)));
  app.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));
  app.onError(handleError);
  return app;
}
