// Admin route for one outbound event: its envelope fields, the exact body sent, and its deliveries (requirements §4).
import { z } from '@hono/zod-openapi';
import { seesRawBodies } from '../../access/roles.js';
import type { DeliveryAdmin } from '../../outbound/delivery-admin.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './index.js';
import { errorResponses, eventJson, eventSchema } from './outbound-schemas.js';

const getEvent = adminRoute({ role: 'viewer', merchant: true }, {
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

export function registerEvents(admin: AdminApp, service: DeliveryAdmin): void {
  admin.openapi(getEvent, async (c) => {
    const { id } = c.req.valid('param');
    const principal = c.get('principal');
    const found = await service.event(principal, id);
    if (!found) throw new ApiError('not_found', `event ${id} does not exist`);
    const event = eventJson(found.event, found.deliveries);
    // A1: a viewer sees the envelope and deliveries, never the body (personal data lives there).
    return c.json(seesRawBodies(principal) ? event : { ...event, body: undefined }, 200);
  });
}
