// Admin routes for deliveries: list by status/endpoint/event (O11), get with attempts, manual retry (O12) and
// bulk recovery of an endpoint's FAILED deliveries (O13), skip in an ordered endpoint's line (M3). C4: the list is
// also searched by what an operator has in hand: payment reference, merchant account, event type.
import { z } from '@hono/zod-openapi';
import { seesRawBodies } from '../../access/roles.js';
import { BodySearchForbiddenError, DeliveryConflictError, type DeliveryAdmin } from '../../outbound/delivery-admin.js';
import { bindOutboundBacklogGauges } from '../../metrics/outbound-backlog.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { deliverySearch, deliverySearchQuery } from './search-query.js';
import { OPERATOR_FIELD_HELP, operatorOf } from './operator.js';
import {
  attemptJson,
  conflictResponse,
  deliveryJson,
  deliverySchema,
  deliveryStatusSchema,
  deliveryWithAttemptsSchema,
  errorResponses,
  idParam,
  json,
} from './outbound-schemas.js';
import { afterIdOf, listEnvelope, listWindow, page, paginationQuery, windowQuery } from './pagination.js';
import { isoDateTime } from './datetime.js';

const tags = ['Webhook deliveries'];

const operatorFields = {
  operator: z.string().min(1).max(200).optional().openapi({ description: OPERATOR_FIELD_HELP }),
  reason: z.string().min(1).max(500).optional(),
};

const listDeliveries = adminRoute({ role: 'viewer', merchant: true }, {
  method: 'get',
  path: '/webhook-deliveries',
  tags,
  summary:
    'List deliveries by status, endpoint, event, payment reference, merchant account, event type and creation time, ordered by id (asc or desc), with cursor pagination (O11, C4, C9)',
  request: {
    query: z.strictObject({
      status: deliveryStatusSchema.optional(),
      endpoint_id: z.string().regex(/^we_[0-9a-z]+$/, 'must be a we_… id').optional(),
      event_id: z.string().regex(/^evt_[A-Za-z0-9_]{1,200}$/, 'must be an evt_… id').optional(),
      ...deliverySearchQuery,
      ...paginationQuery,
      ...windowQuery,
    }),
  },
  responses: { 200: json(listEnvelope(deliverySchema), 'A page of deliveries'), ...errorResponses },
});

const getDelivery = adminRoute({ role: 'viewer', merchant: true }, {
  method: 'get',
  path: '/webhook-deliveries/{id}',
  tags,
  summary: 'One delivery with every attempt: status code, latency, error kind, response excerpt (O11)',
  request: { params: idParam('whd', 'whd_01jd2m3k4n5p6q7r8s9t0v1w2x') },
  responses: { 200: json(deliveryWithAttemptsSchema, 'The delivery and its attempts'), ...errorResponses },
});

const retryDelivery = adminRoute({ role: 'operator', merchant: true }, {
  method: 'post',
  path: '/webhook-deliveries/{id}/retry',
  tags,
  summary: 'Attempt now: a FAILED delivery goes back to PENDING and starts a new cycle; one waiting in backoff attempts at once (O12)',
  request: {
    params: idParam('whd', 'whd_01jd2m3k4n5p6q7r8s9t0v1w2x'),
    body: { content: { 'application/json': { schema: z.strictObject(operatorFields).openapi('RetryRequest') } }, required: false },
  },
  responses: { 202: json(deliverySchema, 'Retry requested'), ...errorResponses, ...conflictResponse },
});

const skipDelivery = adminRoute({ role: 'operator', merchant: true }, {
  method: 'post',
  path: '/webhook-deliveries/{id}/skip',
  tags,
  summary: "M3: the next delivery to this delivery's ordered endpoint stops waiting for it (this one keeps its own retries)",
  request: {
    params: idParam('whd', 'whd_01jd2m3k4n5p6q7r8s9t0v1w2x'),
    body: { content: { 'application/json': { schema: z.strictObject(operatorFields).openapi('SkipRequest') } }, required: false },
  },
  responses: { 200: json(deliverySchema, 'Skipped in its line'), ...errorResponses, ...conflictResponse },
});

const recoverEndpoint = adminRoute({ role: 'operator', merchant: false }, {
  method: 'post',
  path: '/webhook-endpoints/{id}/recover',
  tags,
  summary: "Re-queue the endpoint's FAILED deliveries created since a time (after an outage or re-enabling, O13)",
  request: {
    params: idParam('we', 'we_01jd2m3k4n5p6q7r8s9t0v1w2x'),
    body: {
      content: {
        'application/json': {
          schema: z.strictObject({ since: isoDateTime(), ...operatorFields }).openapi('RecoverRequest'),
        },
      },
      required: true,
    },
  },
  responses: {
    202: json(z.object({ requeued: z.number().int(), delivery_ids: z.array(z.string()) }).openapi('RecoverResult'), 'Deliveries re-queued'),
    ...errorResponses,
    ...conflictResponse,
  },
});

export function registerWebhookDeliveries(admin: AdminApp, deps: ApiDeps, service: DeliveryAdmin): void {
  // C7: the outbound backlog and endpoint health gauges are the API process's (one figure per metric).
  bindOutboundBacklogGauges(deps.db);
  const logger = deps.logger.child({ resource: 'webhook_delivery' });
  const conflict = (error: unknown): never => {
    if (error instanceof DeliveryConflictError) throw new ApiError('conflict', error.message);
    throw error;
  };

  admin.openapi(listDeliveries, async (c) => {
    const q = c.req.valid('query');
    const rows = await service
      .list(c.get('principal'), {
        limit: q.limit,
        ...listWindow(q),
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.endpoint_id !== undefined ? { endpointId: q.endpoint_id } : {}),
        ...(q.event_id !== undefined ? { eventId: q.event_id } : {}),
        ...deliverySearch(q),
        ...afterIdOf(q.cursor),
      })
      .catch((error: unknown) => {
        if (error instanceof BodySearchForbiddenError) throw new ApiError('forbidden', error.message); // A19
        throw error;
      });
    const result = page(rows, q.limit, (r) => r.id);
    return c.json({ ...result, data: result.data.map(deliveryJson) }, 200);
  });

  admin.openapi(getDelivery, async (c) => {
    const { id } = c.req.valid('param');
    const principal = c.get('principal');
    const found = await service.get(principal, id);
    if (!found) throw new ApiError('not_found', `webhook delivery ${id} does not exist`);
    // A1: a viewer sees the attempts, not what the merchant's server answered.
    const attempts = found.attempts.map(attemptJson).map((a) => (seesRawBodies(principal) ? a : { ...a, response_excerpt: undefined }));
    return c.json({ ...deliveryJson(found.delivery), attempts }, 200);
  });

  admin.openapi(retryDelivery, async (c) => {
    const { id } = c.req.valid('param');
    // The body is optional: `curl -X POST …/retry` with no body is a valid retry.
    const body = c.req.header('content-type')?.includes('json') ? c.req.valid('json') : {};
    const principal = c.get('principal');
    const request = { ...body, operator: operatorOf(principal, body.operator) }; // A2
    const delivery = await service.retry(principal, id, request).catch(conflict);
    if (!delivery) throw new ApiError('not_found', `webhook delivery ${id} does not exist`);
    logger.info({ deliveryId: id, operator: principal.keyId, reason: body.reason }, 'manual retry requested (O12)');
    return c.json(deliveryJson(delivery), 202);
  });

  admin.openapi(skipDelivery, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.header('content-type')?.includes('json') ? c.req.valid('json') : {};
    const principal = c.get('principal');
    operatorOf(principal, body.operator); // A2: a body may name only the caller itself
    const delivery = await service.skip(principal, id, { reason: body.reason }).catch(conflict);
    if (!delivery) throw new ApiError('not_found', `webhook delivery ${id} does not exist`);
    logger.info({ deliveryId: id, operator: principal.keyId, reason: body.reason }, 'delivery skipped in its ordered line (M3, A13)');
    return c.json(deliveryJson(delivery), 200);
  });

  admin.openapi(recoverEndpoint, async (c) => {
    const { id } = c.req.valid('param');
    const { since, ...body } = c.req.valid('json');
    const principal = c.get('principal');
    const request = { ...body, operator: operatorOf(principal, body.operator) }; // A2
    const result = await service.recover(principal, id, new Date(since), request).catch(conflict);
    if (!result) throw new ApiError('not_found', `webhook endpoint ${id} does not exist`);
    logger.info({ endpointId: id, since, requeued: result.requeued, operator: principal.keyId }, 'failed deliveries re-queued (O13)');
    return c.json({ requeued: result.requeued, delivery_ids: result.deliveryIds }, 202);
  });
}
