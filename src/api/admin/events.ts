// Admin routes for one outbound event: its envelope fields, the exact body sent, and its deliveries (requirements
// §4); O19: expunge its body now (admin, audited).
import { z } from '@hono/zod-openapi';
import { seesRawBodies } from '../../access/roles.js';
import type { Db } from '../../db/client.js';
import type { DeliveryAdmin } from '../../outbound/delivery-admin.js';
import { EventNotFoundError, expungeEvent } from '../../outbound/expunge.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, eventJson, eventSchema } from './outbound-schemas.js';

const params = z.object({
  id: z
    .string()
    .regex(/^evt_[A-Za-z0-9_]{1,200}$/, 'must be an evt_… id')
    .openapi({ param: { name: 'id', in: 'path' }, example: 'evt_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
});

const getEvent = adminRoute({ role: 'viewer', merchant: true }, {
  method: 'get',
  path: '/events/{id}',
  tags: ['Events'],
  summary: 'One event with the body every delivery sends and its deliveries',
  request: { params },
  responses: { 200: { content: { 'application/json': { schema: eventSchema } }, description: 'The event' }, ...errorResponses },
});

const expungeSchema = z
  .object({
    id: z.string(),
    object: z.literal('event_expunge'),
    expunged_at: z.string().openapi({ format: 'date-time' }),
    reason: z.string().nullable(),
    already_expunged: z.boolean(),
  })
  .openapi('EventExpunge');

const expungeRoute = adminRoute({ role: 'admin', merchant: false }, {
  method: 'post',
  path: '/events/{id}/expunge',
  tags: ['Events'],
  summary: "O19: remove the event's body and its attempts' response excerpts now; the event, deliveries and attempts stay",
  request: {
    params,
    body: { content: { 'application/json': { schema: z.strictObject({ reason: z.string().min(1).max(500) }).openapi('ExpungeEvent') } }, required: true },
  },
  responses: { 200: { content: { 'application/json': { schema: expungeSchema } }, description: 'Expunged (or already)' }, ...errorResponses },
});

export function registerEvents(admin: AdminApp, service: DeliveryAdmin, db: Db): void {
  admin.openapi(expungeRoute, async (c) => {
    const { id } = c.req.valid('param');
    const { reason } = c.req.valid('json');
    const done = await expungeEvent(db, c.get('principal'), id, reason).catch((error: unknown) => {
      if (error instanceof EventNotFoundError) throw new ApiError('not_found', error.message);
      throw error;
    });
    return c.json({ id, object: 'event_expunge' as const, expunged_at: done.expungedAt.toISOString(), reason: done.reason, already_expunged: done.already }, 200);
  });

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
