// The admin API under /admin/v1: bearer auth, zod-validated requests that name the bad field, one error shape,
// and an OpenAPI document built from the same route definitions (/admin/v1/openapi.json).
import { OpenAPIHono } from '@hono/zod-openapi';
import type { ApiDeps } from '../deps.js';
import { handleError, validationError } from '../errors.js';
import { bearerAuth } from '../middleware/bearer-auth.js';
import { registerDocsPage } from './docs-page.js';
import { registerEvents } from './events.js';
import { registerExports } from './exports.js';
import { registerLedger } from './ledger.js';
import { registerReconciliations } from './reconciliations.js';
import { registerWebhookDeliveries } from './webhook-deliveries.js';
import { registerWebhookEndpoints } from './webhook-endpoints.js';

export type AdminApp = OpenAPIHono;

export function createAdminApp(deps: ApiDeps): OpenAPIHono {
  const admin = new OpenAPIHono({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
  admin.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'ApiPay admin API', version: '1.0.0', description: 'Operator surface of the ApiPay webhook platform.' },
    servers: [{ url: '/admin/v1' }],
    security: [{ bearer: [] }],
  });
  admin.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  // The API's description and its viewer (C9) are public; everything else needs the bearer token.
  const isPublic = (path: string) => path.endsWith('/openapi.json') || path.endsWith('/admin/v1/docs');
  admin.use('*', async (c, next) => (isPublic(c.req.path) ? next() : bearerAuth(deps.env.ADMIN_TOKEN)(c, next)));
  admin.onError(handleError);
  // Resource modules register themselves here, one line each:
  registerWebhookEndpoints(admin, deps);
  registerWebhookDeliveries(admin, deps);
  registerEvents(admin, deps);
  registerReconciliations(admin, deps);
  registerExports(admin, deps);
  registerLedger(admin, deps);
  registerDocsPage(admin);
  return admin;
}
