// The access rule of every admin route (A1), declared where the route is: the OpenAPI document states it
// (description and x-required-role / x-merchant-access) and the authentication middleware enforces it from the
// same registry, so what the document says and what the server does cannot drift apart.
import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Access } from '../../access/roles.js';
import { errorSchema } from './outbound-schemas.js';

const errorResponse = (description: string) => ({ content: { 'application/json': { schema: errorSchema } }, description });
const accessResponses = {
  401: errorResponse('Missing, unknown or revoked credential'),
  403: errorResponse("The credential's role may not do this"),
  429: errorResponse('Rate limit of this key exceeded; see Retry-After'),
} as const;

/** Routes that answer without a credential, by method and path (never by a path suffix): the API's description and its viewer (C9). */
export const PUBLIC_ROUTES = new Set(['GET /openapi.json', 'GET /asyncapi.json', 'GET /docs']);

function describe(access: Access): string {
  const who = access.role === 'admin' ? 'admin' : access.role === 'operator' ? 'operator or admin' : 'viewer, operator or admin';
  return `Required role: ${access.role} (${who})${access.merchant ? '; a merchant key may call it for its own objects only' : ''}.`;
}

/** createRoute with its access rule. Every admin route is built with this; a table test checks none is missing. */
export function adminRoute<const R extends RouteConfig>(access: Access, config: R) {
  return createRoute({
    ...config,
    description: [config.description, describe(access)].filter(Boolean).join('\n\n'),
    'x-required-role': access.role,
    'x-merchant-access': access.merchant ? 'own' : 'none',
    responses: { ...accessResponses, ...config.responses },
  });
}

/** `GET /webhook-endpoints/:id` → its Access, read back from the routes registered for the OpenAPI document. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app's Env: only its route registry is read
export function accessRules(admin: OpenAPIHono<any>): Map<string, Access> {
  const rules = new Map<string, Access>();
  for (const definition of admin.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const route = definition.route as RouteConfig & { 'x-required-role'?: Access['role']; 'x-merchant-access'?: string };
    if (!route['x-required-role']) continue; // no rule: the middleware refuses it (fail closed)
    rules.set(routeKey(route.method, route.path.replace(/\{(\w+)\}/g, ':$1')), {
      role: route['x-required-role'],
      merchant: route['x-merchant-access'] === 'own',
    });
  }
  return rules;
}

export const routeKey = (method: string, honoPath: string) => `${method.toUpperCase()} ${honoPath}`;
