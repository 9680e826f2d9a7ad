// The admin API under /admin/v1: authentication and role checks decided by route (A1, A9), a token bucket per key
// (A7), a body limit on every route (A18), zod-validated requests that name the bad field, one error shape, and an OpenAPI document built from the
// same route definitions (/admin/v1/openapi.json, public) stating the role each operation needs, with the event
// catalog as its webhooks and as AsyncAPI (/admin/v1/asyncapi.json, public, M10).
import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { createApiKeyService } from '../../access/api-keys.js';
import { createIdpVerifier } from '../../access/idp-tokens.js';
import { createRateLimiter } from '../../lib/token-bucket.js';
import { idpUnreachable } from '../../metrics/idp.js';
import type { AdminEnv } from '../context.js';
import type { AdminApp } from './app.js';
import type { ApiDeps } from '../deps.js';
import type { ApiServices } from '../services.js';
import { ApiError, handleError, validationError } from '../errors.js';
import { authenticate } from '../middleware/authenticate.js';
import { storableInput } from '../middleware/storable-input.js';
import { accessRules, PUBLIC_ROUTES } from './access.js';
import { registerApiKeys } from './api-keys.js';
import { registerAuditEvents } from './audit-events.js';
import { registerDocsPage } from './docs-page.js';
import { registerEndpointStatusChanges } from './endpoint-status-changes.js';
import { registerEndpointTests } from './endpoint-tests.js';
import { registerEventStream } from './event-stream.js';
import { registerEventTrigger } from './event-trigger.js';
import { registerDestinationTypes } from './destination-types.js';
import { registerEventTypes } from './event-types.js';
import { registerEvents } from './events.js';
import { registerExports } from './exports.js';
import { registerLedger } from './ledger.js';
import { registerPortalLinks } from './portal-links.js';
import { registerPublishedDocuments } from './published-docs.js';
import { registerReconciliations } from './reconciliations.js';
import { registerSecrets } from './secrets.js';
import { registerWebhookDeliveries } from './webhook-deliveries.js';
import { registerWebhookEndpoints } from './webhook-endpoints.js';

export type { AdminApp };

export function createAdminApp(deps: ApiDeps, services: ApiServices): AdminApp {
  const admin = new OpenAPIHono<AdminEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
  const keys = createApiKeyService({
    db: deps.db,
    peopleFromIdp: deps.profile.idp !== undefined,
    ...(deps.now ? { now: deps.now } : {}),
  }); // A28
  admin.use(
    '*',
    authenticate({
      rules: () => accessRules(admin),
      publicRoutes: PUBLIC_ROUTES,
      bootstrapToken: deps.env.ADMIN_TOKEN,
      keys,
      limiter: createRateLimiter(deps.profile.admin.rate_limit),
      throttle: services.throttle,
      ...(deps.profile.idp
        ? {
            idp: createIdpVerifier(deps.profile.idp, {
              // A29: the IdP is down: one counter step and one log line per failed fetch (the reason, never a token).
              onUnreachable: (reason) => {
                idpUnreachable.inc();
                deps.logger.warn({ issuer: deps.profile.idp?.issuer, reason }, 'identity provider unreachable (A29)');
              },
            }),
          }
        : {}), // A26
      production: deps.env.NODE_ENV === 'production', // A28
    }),
  );
  // A18: no admin request body is read past the profile's limit (1 MiB by default); 413 in the one error shape.
  const maxBody = deps.profile.admin.max_body_bytes;
  admin.use(
    '*',
    bodyLimit({
      maxSize: maxBody,
      onError: () => {
        throw new ApiError('payload_too_large', `request body exceeds ${maxBody} bytes (admin.max_body_bytes)`);
      },
    }),
  );
  admin.use('*', storableInput());
  // M10: the document carries the event catalog as its OpenAPI 3.1 `webhooks`; /asyncapi.json the same as AsyncAPI 3.
  registerPublishedDocuments(admin, {
    openapi: '3.1.0',
    info: {
      title: 'ApiPay admin API',
      version: '1.0.0',
      description:
        'Operator surface of the ApiPay webhook platform. Every operation but this document needs `Authorization: Bearer <API key>` ' +
        '(services and merchants) or `Bearer <access token>` of the identity provider (people); ' +
        'its description and `x-required-role` state the least role (viewer < operator < admin), `x-merchant-access: own` that a merchant key may call it for its own objects.',
    },
    servers: [{ url: '/admin/v1' }],
    security: [{ bearer: [] }],
  });
  admin.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  admin.onError(handleError);
  // Resource modules register themselves here, one line each:
  registerWebhookEndpoints(admin, deps);
  registerEndpointStatusChanges(admin, deps.db);
  registerEndpointTests(admin, deps);
  registerWebhookDeliveries(admin, deps, services.deliveryAdmin);
  registerEventStream(admin, deps, {
    maxPerKey: deps.profile.admin.max_streams_per_key,
    maxOpen: deps.profile.admin.max_streams,
  }); // M7, A18; before /events/{id}, which would otherwise match /events/stream
  registerEventTrigger(admin, deps); // M7
  registerEventTypes(admin); // M8: the event catalog
  registerDestinationTypes(admin); // M11: what a broker destination needs
  registerEvents(admin, services.deliveryAdmin, deps.db);
  registerReconciliations(admin, deps);
  registerExports(admin, deps);
  registerLedger(admin, deps);
  registerApiKeys(admin, keys);
  registerSecrets(admin, deps);
  registerPortalLinks(admin, deps, services.portalLinks); // C2, A15
  registerAuditEvents(admin, deps); // A3
  registerDocsPage(admin); // C9: the viewer of /openapi.json, public like it
  return admin;
}
