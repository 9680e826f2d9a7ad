// M6: POST /webhook-endpoints/{id}/test sends a signed `ping` to that endpoint now, as a delivery like any other
// (its workflow, its attempts, GET /webhook-deliveries/{id}); the answer names the delivery.
import { z } from '@hono/zod-openapi';
import type { Principal } from '../../access/roles.js';
import { startDeliveryWorkflows } from '../../outbound/delivery-start.js';
import { DeliveryConflictError } from '../../outbound/delivery-admin.js';
import { EndpointNotFoundError } from '../../outbound/endpoints.js';
import { createTestDelivery } from '../../outbound/test-event.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { conflictResponse, errorResponses, idParam, json } from './outbound-schemas.js';

const testDeliverySchema = z
  .object({
    object: z.literal('test_delivery'),
    delivery_id: z.string().openapi({ example: 'whd_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    event_id: z.string().openapi({ example: 'evt_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    endpoint_id: z.string(),
    type: z.literal('ping'),
    status: z.literal('PENDING'),
  })
  .openapi('TestDelivery');

const sendTest = adminRoute(
  { role: 'admin', merchant: true },
  {
    method: 'post',
    path: '/webhook-endpoints/{id}/test',
    tags: ['Webhook endpoints'],
    summary: 'Send a signed ping event to this endpoint now (M6); follow it at /webhook-deliveries/{delivery_id}',
    request: { params: idParam('we', 'we_01jd2m3k4n5p6q7r8s9t0v1w2x') },
    responses: { 202: json(testDeliverySchema, 'The ping delivery, started'), ...errorResponses, ...conflictResponse },
  },
);

/** The ping's rows, then its workflow: what the admin route and the console/portal button (C2) both do. */
export async function sendTestEvent(deps: ApiDeps, principal: Principal, endpointId: string) {
  const delivery = await createTestDelivery(deps.db, principal, endpointId, deps.now?.());
  await startDeliveryWorkflows({ temporal: deps.temporal, taskQueue: deps.taskQueues.delivery, profile: deps.profile }, [
    delivery,
  ]);
  deps.logger.info({ endpointId, deliveryId: delivery.deliveryId, keyId: principal.keyId }, 'test event sent');
  return delivery;
}

export function registerEndpointTests(admin: AdminApp, deps: ApiDeps): void {
  admin.openapi(sendTest, async (c) => {
    const { id } = c.req.valid('param');
    const delivery = await sendTestEvent(deps, c.get('principal'), id).catch((error: unknown) => {
      if (error instanceof EndpointNotFoundError) throw new ApiError('not_found', error.message);
      if (error instanceof DeliveryConflictError) throw new ApiError('conflict', error.message);
      throw error;
    });
    return c.json(
      {
        object: 'test_delivery' as const,
        delivery_id: delivery.deliveryId,
        event_id: delivery.eventId,
        endpoint_id: id,
        type: 'ping' as const,
        status: 'PENDING' as const,
      },
      202,
    );
  });
}
