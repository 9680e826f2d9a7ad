// Admin route for one outbound event: its envelope fields, the exact body sent, and its deliveries (requirements §4).
import { createRoute, z } from '@hono/zod-openapi';
import { createDeliveryAdmin } from '../../outbound/delivery-admin.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { AdminApp } from './app.js';
import { errorResponses, eventJson, eventSchema } from './outbound-schemas.js';

const getEvent = createRoute({
  method: 'get',
  path: '/events/{id}',
  tags: ['Events'],
  summary: 'One event with the body every delivery sends and its deliveries',
  request: {
    params: z.object({
      id: z
        .string()
        .regex(/^evt_[A-Za-z0-9_]{1,200}$/, 'must be an evt_… id')
        .openapi({ param: { name: 'id', in: 'path' }, example: 'evt_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    }),
  },
  responses: { 200: { content: { 'application/json': { schema: eventSchema } }, description: 'The event' }, ...errorResponses },
});

export function registerEvents(admin: AdminApp, deps: ApiDeps): void {
  const service = createDeliveryAdmin({ db: deps.db, temporal: deps.temporal, taskQueue: deps.taskQueues.delivery, retryScheduleMs: deps.profile.outbound.retry_schedule });
  admin.openapi(getEvent, async (c) => {
    const { id } = c.req.valid('param');
    const found = await service.event(id);
    if (!found) throw new ApiError('not_found', `event ${id} does not exist`);
    return c.json(eventJson(found.event, found.deliveries), 200);
  });
}
