// Admin routes for webhook endpoints: create (secret shown once), list, get, update, delete, rotate secret,
// disable/enable (requirements §4, O9, O13, O15). M11: `type` http (a URL) or a broker destination (rabbitmq, kafka)
// whose `destination` fields are validated by the type's one description (src/outbound/destinations/).
import { z } from '@hono/zod-openapi';
import { createEndpointService, EndpointNotFoundError } from '../../outbound/endpoints.js';
import { keyringFromEnv } from '../../shared/keyring.js';
import { scopeOf } from '../../access/roles.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import { createBody, updateBody } from './endpoint-bodies.js';
import { checkBrokerHosts as checkBrokerPolicy, checkUrl as checkUrlPolicy, destinationRefusal, ownAccount } from './endpoint-checks.js';
import type { AdminApp } from './app.js';
import { endpointJson, endpointSchema, endpointWithSecretSchema, errorResponses, idParam, json } from './outbound-schemas.js';
import { afterIdOf, listEnvelope, listWindow, page, paginationQuery, windowQuery } from './pagination.js';

const tags = ['Webhook endpoints'];
const params = idParam('we', 'we_01jd2m3k4n5p6q7r8s9t0v1w2x');

const jsonBody = <T extends z.ZodTypeAny>(schema: T) => ({ body: { content: { 'application/json': { schema } }, required: true } });

// M11: a merchant key (and the portal's form) registers endpoints of its own account; staff admins of any account.
const createEndpoint = adminRoute({ role: 'admin', merchant: true }, {
  method: 'post',
  path: '/webhook-endpoints',
  tags,
  summary: 'Register a webhook endpoint; the response carries its signing secret, shown only this once',
  request: jsonBody(createBody),
  responses: { 201: json(endpointWithSecretSchema, 'Created'), ...errorResponses },
});

const listEndpoints = adminRoute({ role: 'viewer', merchant: true }, {
  method: 'get',
  path: '/webhook-endpoints',
  tags,
  summary: 'List endpoints, ordered by id (asc or desc), within a creation-time window, with cursor pagination (C9)',
  request: { query: z.strictObject({ merchant_account: z.string().min(1).optional(), ...paginationQuery, ...windowQuery }) },
  responses: { 200: json(listEnvelope(endpointSchema), 'A page of endpoints'), ...errorResponses },
});

const getEndpoint = adminRoute({ role: 'viewer', merchant: true }, {
  method: 'get',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'One endpoint (never its secret)',
  request: { params },
  responses: { 200: json(endpointSchema, 'The endpoint'), ...errorResponses },
});

// M11: a merchant key (and the portal's edit form) changes endpoints of its own account, as it registers them.
const updateEndpoint = adminRoute({ role: 'admin', merchant: true }, {
  method: 'patch',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'Change url, event_types, description, ordering (M3), rate_limit_per_second (M5), signature_scheme (O16) or ed25519_signing (O17)',
  request: { params, ...jsonBody(updateBody) },
  responses: { 200: json(endpointSchema, 'The updated endpoint'), ...errorResponses },
});

const deleteEndpoint = adminRoute({ role: 'admin', merchant: false }, {
  method: 'delete',
  path: '/webhook-endpoints/{id}',
  tags,
  summary: 'Delete an endpoint: no further deliveries or attempts; its secrets are destroyed; delivery history stays',
  request: { params },
  responses: { 204: { description: 'Deleted' }, ...errorResponses },
});

const rotateSecret = adminRoute({ role: 'admin', merchant: true }, {
  method: 'post',
  path: '/webhook-endpoints/{id}/secret/rotate',
  tags,
  summary: 'New signing secret (shown once); the previous one still signs for outbound.secret_rotation_grace (O9)',
  request: { params },
  responses: { 200: json(endpointWithSecretSchema, 'The endpoint with its new secret'), ...errorResponses },
});

const disableEndpoint = adminRoute({ role: 'admin', merchant: false }, {
  method: 'post',
  path: '/webhook-endpoints/{id}/disable',
  tags,
  summary: 'Stop delivering to this endpoint, recording why',
  request: { params, ...jsonBody(z.strictObject({ reason: z.string().min(1).max(500) }).openapi('DisableWebhookEndpoint')) },
  responses: { 200: json(endpointSchema, 'The disabled endpoint'), ...errorResponses },
});

const enableEndpoint = adminRoute({ role: 'admin', merchant: false }, {
  method: 'post',
  path: '/webhook-endpoints/{id}/enable',
  tags,
  summary: 'Deliver to this endpoint again (its failure streak starts over); use /recover to re-queue what failed',
  request: { params },
  responses: { 200: json(endpointSchema, 'The enabled endpoint'), ...errorResponses },
});

export function registerWebhookEndpoints(admin: AdminApp, deps: ApiDeps): void {
  const service = createEndpointService({
    db: deps.db,
    secretsKey: keyringFromEnv(deps.env),
    ...(deps.now ? { now: deps.now } : {}),
  });
  const logger = deps.logger.child({ resource: 'webhook_endpoint' });

  const policy = { allowInsecure: deps.profile.outbound.allow_insecure_urls };
  const checkUrl = (value: string) => checkUrlPolicy(value, policy);
  const checkBrokerHosts = (fields: Record<string, string> | undefined) => checkBrokerPolicy(fields, policy);
  const notFound = (error: unknown): never => {
    if (error instanceof EndpointNotFoundError) throw new ApiError('not_found', error.message);
    return destinationRefusal(error);
  };

  admin.openapi(createEndpoint, async (c) => {
    const body = c.req.valid('json');
    const type = body.type ?? 'http';
    ownAccount(scopeOf(c.get('principal')), body.merchant_account);
    if (type === 'http') await checkUrl(body.url!);
    else await checkBrokerHosts(body.destination);
    const { endpoint, secret } = await service
      .create(c.get('principal'), {
      merchantAccount: body.merchant_account,
      ...(type === 'http' ? { url: body.url! } : { destination: { type, fields: body.destination ?? {} } }),
      eventTypes: body.event_types,
      livemode: body.livemode,
      description: body.description ?? null,
      ordering: body.ordering,
      rateLimitPerSecond: body.rate_limit_per_second,
      signatureScheme: body.signature_scheme,
      ed25519: body.ed25519_signing,
    })
      .catch(notFound);
    logger.info({ endpointId: endpoint.id, merchantAccount: endpoint.merchantAccount, type }, 'webhook endpoint created');
    return c.json({ ...endpointJson(endpoint), secret }, 201);
  });

  admin.openapi(listEndpoints, async (c) => {
    const query = c.req.valid('query');
    const rows = await service.list(c.get('principal'), {
      limit: query.limit,
      ...listWindow(query),
      ...(query.merchant_account !== undefined ? { merchantAccount: query.merchant_account } : {}),
      ...afterIdOf(query.cursor),
    });
    const result = page(rows, query.limit, (r) => r.id);
    return c.json({ ...result, data: result.data.map(endpointJson) }, 200);
  });

  admin.openapi(getEndpoint, async (c) => {
    const endpoint = await service.get(c.get('principal'), c.req.valid('param').id).catch(notFound);
    return c.json(endpointJson(endpoint), 200);
  });

  admin.openapi(updateEndpoint, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const current = await service.get(c.get('principal'), id).catch(notFound); // 404 before a URL check a caller cannot act on
    if (body.url !== undefined && current.destinationType !== 'http') {
      throw new ApiError('validation_failed', `url: a ${current.destinationType} endpoint has destination fields, not a url`, { issues: [{ field: 'url', message: 'change its destination fields instead' }] });
    }
    if (body.url !== undefined) await checkUrl(body.url);
    if (body.destination !== undefined) await checkBrokerHosts(body.destination);
    const endpoint = await service
      .update(c.get('principal'), id, {
        ...(body.url !== undefined ? { url: body.url } : {}),
        ...(body.destination !== undefined ? { destinationFields: body.destination } : {}),
        ...(body.event_types !== undefined ? { eventTypes: body.event_types } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.ordering !== undefined ? { ordering: body.ordering } : {}),
        ...(body.rate_limit_per_second !== undefined ? { rateLimitPerSecond: body.rate_limit_per_second } : {}),
        ...(body.signature_scheme !== undefined ? { signatureScheme: body.signature_scheme } : {}),
        ...(body.ed25519_signing !== undefined ? { ed25519: body.ed25519_signing } : {}),
      })
      .catch(notFound);
    logger.info({ endpointId: id, fields: Object.keys(body) }, 'webhook endpoint updated');
    return c.json(endpointJson(endpoint), 200);
  });

  admin.openapi(deleteEndpoint, async (c) => {
    const { id } = c.req.valid('param');
    await service.remove(c.get('principal'), id).catch(notFound);
    logger.info({ endpointId: id }, 'webhook endpoint deleted');
    return c.body(null, 204);
  });

  admin.openapi(rotateSecret, async (c) => {
    const { id } = c.req.valid('param');
    const { endpoint, secret } = await service.rotateSecret(c.get('principal'), id, deps.profile.outbound.secret_rotation_grace).catch(notFound);
    logger.info({ endpointId: id, graceMs: deps.profile.outbound.secret_rotation_grace }, 'webhook endpoint secret rotated');
    return c.json({ ...endpointJson(endpoint), secret }, 200);
  });

  admin.openapi(disableEndpoint, async (c) => {
    const { id } = c.req.valid('param');
    const { reason } = c.req.valid('json');
    const endpoint = await service.disable(c.get('principal'), id, reason).catch(notFound);
    logger.info({ endpointId: id, reason }, 'webhook endpoint disabled by operator');
    return c.json(endpointJson(endpoint), 200);
  });

  admin.openapi(enableEndpoint, async (c) => {
    const { id } = c.req.valid('param');
    const endpoint = await service.enable(c.get('principal'), id).catch(notFound);
    logger.info({ endpointId: id }, 'webhook endpoint enabled');
    return c.json(endpointJson(endpoint), 200);
  });
}
