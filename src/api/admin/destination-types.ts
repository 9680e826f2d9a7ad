// M11: the destination types an endpoint can have, read from their one description each (src/outbound/destinations/):
// every field's name, label, help, whether it is required or secret, its default and an example. The CLI's flags and
// the portal's form are built from the same descriptions, so this is what each of them asks for.
import { z } from '@hono/zod-openapi';
import { DESTINATIONS } from '../../outbound/destinations/index.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses, json } from './outbound-schemas.js';

const fieldSchema = z.object({
  name: z.string().openapi({ example: 'routing_key' }),
  label: z.string(),
  help: z.string(),
  required: z.boolean(),
  secret: z.boolean().openapi({ description: 'Sealed at rest; never returned after creation' }),
  default: z.string().nullable(),
  example: z.string().nullable(),
});

const typeSchema = z
  .object({
    object: z.literal('destination_type'),
    type: z.string(),
    label: z.string(),
    help: z.string(),
    fields: z.array(fieldSchema),
  })
  .openapi('DestinationType');

const HTTP = {
  object: 'destination_type' as const,
  type: 'http',
  label: 'HTTPS',
  help: 'A signed POST of each event to your URL (the default)',
  fields: [
    {
      name: 'url',
      label: 'URL',
      help: 'the https URL that receives the POSTs',
      required: true,
      secret: false,
      default: null,
      example: 'https://example.com/webhooks',
    },
  ],
};

const listRoute = adminRoute(
  { role: 'viewer', merchant: true },
  {
    method: 'get',
    path: '/destination-types',
    tags: ['Webhook endpoints'],
    summary: 'The destination types of an endpoint (M11): http, rabbitmq, kafka, with the fields each needs',
    responses: {
      200: json(
        z.object({ object: z.literal('list'), data: z.array(typeSchema), has_more: z.literal(false) }),
        'Every destination type',
      ),
      ...errorResponses,
    },
  },
);

export function destinationTypesJson() {
  return [
    HTTP,
    ...Object.values(DESTINATIONS).map((d) => ({
      object: 'destination_type' as const,
      type: d.type,
      label: d.label,
      help: d.help,
      fields: d.fields.map((f) => ({
        name: f.name,
        label: f.label,
        help: f.help,
        required: f.required,
        secret: f.secret === true,
        default: f.default ?? null,
        example: f.example ?? null,
      })),
    })),
  ];
}

export function registerDestinationTypes(admin: AdminApp): void {
  admin.openapi(listRoute, (c) =>
    c.json({ object: 'list' as const, data: destinationTypesJson(), has_more: false as const }, 200),
  );
}
