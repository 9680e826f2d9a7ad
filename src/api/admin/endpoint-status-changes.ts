// M4: the feed of endpoint status changes (O13 auto-disables, operators' disables and enables), newest first, each
// with the endpoint.disabled / endpoint.enabled event that announced it to the merchant.
import { z } from '@hono/zod-openapi';
import type { Db } from '../../db/client.js';
import { listStatusChanges, type StatusChange } from '../../outbound/endpoint-status.js';
import { ENDPOINT_STATUSES } from '../../shared/outbound.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';
import { decodeCursor, listEnvelope, page, paginationQuery } from './pagination.js';

const statusChangeSchema = z
  .object({
    id: z.string().openapi({ example: 'esc_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('endpoint_status_change'),
    endpoint_id: z.string(),
    merchant_account: z.string(),
    from_status: z.enum(ENDPOINT_STATUSES),
    to_status: z.enum(ENDPOINT_STATUSES),
    reason: z.string().nullable(),
    actor: z.string().openapi({ description: '`system` (O13 auto-disable) or `operator:<key name>`' }),
    event_id: z.string().openapi({ description: 'The endpoint.disabled / endpoint.enabled event sent to the merchant' }),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('EndpointStatusChange');

const statusChangeJson = (row: StatusChange): z.infer<typeof statusChangeSchema> => ({
  id: row.id,
  object: 'endpoint_status_change',
  endpoint_id: row.endpointId,
  merchant_account: row.merchantAccount,
  from_status: row.fromStatus as (typeof ENDPOINT_STATUSES)[number],
  to_status: row.toStatus as (typeof ENDPOINT_STATUSES)[number],
  reason: row.reason,
  actor: row.actor,
  event_id: row.eventPublicId,
  created_at: row.createdAt.toISOString(),
});

const listChanges = adminRoute(
  { role: 'viewer', merchant: true },
  {
    method: 'get',
    path: '/endpoint-status-changes',
    tags: ['Webhook endpoints'],
    summary: 'Endpoint disables and enables (M4), newest first, with cursor pagination',
    request: {
      query: z.strictObject({
        endpoint_id: z
          .string()
          .regex(/^we_[0-9a-z]{1,64}$/, 'must be a we_… id')
          .optional(),
        to_status: z.enum(ENDPOINT_STATUSES).optional(),
        ...paginationQuery,
      }),
    },
    responses: { 200: json(listEnvelope(statusChangeSchema), 'A page of status changes'), ...errorResponses },
  },
);

export function registerEndpointStatusChanges(admin: AdminApp, db: Db): void {
  admin.openapi(listChanges, async (c) => {
    const query = c.req.valid('query');
    const beforeId = decodeCursor(query.cursor);
    const rows = await listStatusChanges(db, c.get('principal'), {
      limit: query.limit,
      ...(query.endpoint_id !== undefined ? { endpointId: query.endpoint_id } : {}),
      ...(query.to_status !== undefined ? { toStatus: query.to_status } : {}),
      ...(beforeId !== undefined ? { beforeId } : {}),
    });
    const result = page(rows, query.limit, (r) => r.id);
    return c.json({ ...result, data: result.data.map(statusChangeJson) }, 200);
  });
}
