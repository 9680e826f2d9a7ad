// M8: the event catalog over the admin API: every event type with its versions, JSON Schema (of data.object),
// examples and deprecation, so a merchant's engineer can see what ApiPay sends before subscribing to it.
import { z } from '@hono/zod-openapi';
import { CATALOG, type EventTypeVersion } from '../../catalog/catalog.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';

const versionSchema = z.object({
  version: z.number().int(),
  description: z.string(),
  schema: z.record(z.string(), z.unknown()).openapi({ description: "JSON Schema 2020-12 of the event's data.object" }),
  examples: z.array(z.record(z.string(), z.unknown())).openapi({ description: 'data.object of sample events' }),
});

const eventTypeSchema = z
  .object({
    object: z.literal('event_type'),
    type: z.string().openapi({ example: 'payment.succeeded' }),
    description: z.string(),
    source: z
      .enum(['apipay', 'producer'])
      .openapi({ description: 'apipay: written by ApiPay itself; producer: published by a business service' }),
    latest_version: z.number().int(),
    deprecated: z
      .object({ on: z.string().openapi({ format: 'date' }), replaced_by: z.string().nullable() })
      .nullable()
      .openapi({
        description: 'Set when the type is deprecated: the date after which it may stop being sent, and what replaces it',
      }),
    versions: z.array(versionSchema),
  })
  .openapi('EventType');

function eventTypeJson(type: string): z.infer<typeof eventTypeSchema> {
  const versions = CATALOG.versions(type);
  const latest = versions.at(-1)!;
  const version = (v: EventTypeVersion) => ({
    version: v.version,
    description: v.description,
    schema: { ...v.schema },
    examples: [...v.examples],
  });
  return {
    object: 'event_type',
    type,
    description: latest.description,
    source: latest.source,
    latest_version: latest.version,
    deprecated: latest.deprecated ? { on: latest.deprecated.on, replaced_by: latest.deprecated.replacedBy ?? null } : null,
    versions: versions.map(version),
  };
}

const listRoute = adminRoute(
  { role: 'viewer', merchant: true },
  {
    method: 'get',
    path: '/event-types',
    tags: ['Events'],
    summary: 'The event catalog (M8): every event type ApiPay sends, with its JSON Schema and examples per version',
    responses: {
      200: json(
        z.object({ object: z.literal('list'), data: z.array(eventTypeSchema), has_more: z.literal(false) }),
        'Every event type, by name',
      ),
      ...errorResponses,
    },
  },
);

const getRoute = adminRoute(
  { role: 'viewer', merchant: true },
  {
    method: 'get',
    path: '/event-types/{type}',
    tags: ['Events'],
    summary: 'One event type of the catalog (M8)',
    request: { params: z.object({ type: z.string().max(200).openapi({ example: 'payment.succeeded' }) }) },
    responses: { 200: json(eventTypeSchema, 'The event type'), ...errorResponses },
  },
);

export function registerEventTypes(admin: AdminApp): void {
  admin.openapi(listRoute, (c) =>
    c.json({ object: 'list' as const, data: CATALOG.types.map(eventTypeJson), has_more: false as const }, 200),
  );
  admin.openapi(getRoute, (c) => {
    const { type } = c.req.valid('param');
    if (!CATALOG.get(type)) throw new ApiError('not_found', `event type ${type} is not in the catalog`);
    return c.json(eventTypeJson(type), 200);
  });
}
