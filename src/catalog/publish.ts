// M10: the catalog as the ecosystem reads it. Each type's latest version becomes the schema of a whole delivered
// event (the envelope every POST carries, with the type's data.object schema inside): an AsyncAPI 3.0 document
// (one message per type and version, sent on the merchant's endpoint) and the `webhooks` section of the admin API's
// OpenAPI 3.1 document (one POST per type). The schemas keep to the subset draft-07 and 2020-12 share, so both
// documents' parsers read them; the catalog's own keywords (x-…) and $schema/$id are left out of the copies.
import type { Catalog, EventTypeVersion } from './catalog.js';

const DROPPED = new Set(['$schema', '$id', 'x-event-type', 'x-version', 'x-source', 'x-deprecated-on', 'x-replaced-by']);

/** The data.object schema without the catalog's metadata keywords. */
export function objectSchema(entry: EventTypeVersion): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entry.schema).filter(([key]) => !DROPPED.has(key)));
}

/** The schema of a delivered event of this type and version: what a merchant's endpoint receives. */
export function eventSchema(entry: EventTypeVersion): Record<string, unknown> {
  const { examples, title: _title, description, ...object } = objectSchema(entry);
  const required = ['id', 'object', 'account', 'type', 'created', 'livemode', 'data'];
  return {
    title: `${entry.type} v${entry.version}`,
    description,
    type: 'object',
    required,
    properties: {
      id: { type: 'string', pattern: '^evt_[A-Za-z0-9_]+$', description: 'Unique per event: deduplicate on it' },
      object: { const: 'event' },
      account: { type: 'string', description: 'Your merchant account' },
      type: { const: entry.type },
      version: { const: entry.version, description: 'The catalog version of data.object; absent means 1' },
      created: { type: 'integer', description: 'Unix seconds' },
      livemode: { type: 'boolean' },
      data: {
        type: 'object',
        required: ['object'],
        properties: {
          object: { ...object, examples },
          test_event: { type: 'boolean', description: 'Set on `apipay trigger` samples' },
        },
      },
    },
    ...(entry.deprecated ? { deprecated: true } : {}),
    examples: (examples as Record<string, unknown>[]).map((example) => exampleEvent(entry, example)),
  };
}

function exampleEvent(entry: EventTypeVersion, object: Record<string, unknown>) {
  return {
    id: 'evt_01jd2m3k4n5p6q7r8s9t0v1w2x',
    object: 'event',
    account: 'acct_demo_shop',
    type: entry.type,
    ...(entry.version > 1 ? { version: entry.version } : {}),
    created: 1_796_162_000,
    livemode: false,
    data: { object },
  };
}

const messageName = (entry: EventTypeVersion) => `${entry.type}.v${entry.version}`;
const deprecation = (entry: EventTypeVersion) =>
  entry.deprecated
    ? ` Deprecated on ${entry.deprecated.on}${entry.deprecated.replacedBy ? `: use ${entry.deprecated.replacedBy}` : ''}.`
    : '';

/** AsyncAPI 3.0: ApiPay sends every catalog message to the merchant's endpoint (an address each merchant chooses). */
export function asyncApiDocument(catalog: Catalog): Record<string, unknown> {
  const messages: Record<string, unknown> = {};
  for (const entry of catalog.entries) {
    messages[messageName(entry)] = {
      name: entry.type,
      title: entry.title,
      summary: `${entry.description}${deprecation(entry)}`,
      contentType: 'application/json',
      headers: {
        type: 'object',
        properties: {
          'ApiPay-Signature': { type: 'string', description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">' },
          'webhook-id': { type: 'string', description: 'Standard Webhooks scheme (O16): the event id' },
          'webhook-timestamp': { type: 'string' },
          'webhook-signature': { type: 'string' },
        },
      },
      payload: eventSchema(entry),
    };
  }
  const refs = Object.keys(messages).map((name) => ({ $ref: `#/channels/merchantEndpoint/messages/${name}` }));
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'ApiPay webhook events',
      version: '1.0.0',
      description:
        'Every event ApiPay delivers to a merchant endpoint: a signed HTTP POST of one JSON event (docs/merchants.md, "Events we send").',
    },
    defaultContentType: 'application/json',
    channels: {
      merchantEndpoint: {
        address: null,
        title: 'Your webhook endpoint',
        description: 'The HTTPS URL of one of your webhook endpoints; it receives the types it subscribes to.',
        messages: Object.fromEntries(Object.keys(messages).map((name) => [name, { $ref: `#/components/messages/${name}` }])),
        bindings: { http: { bindingVersion: '0.3.0' } },
      },
    },
    operations: {
      sendEvent: {
        action: 'send',
        channel: { $ref: '#/channels/merchantEndpoint' },
        summary: 'ApiPay POSTs an event; answer 2xx within 10 s once its signature verifies, or it is retried',
        messages: refs,
        bindings: { http: { method: 'POST', bindingVersion: '0.3.0' } },
      },
    },
    components: { messages },
  };
}

/** OpenAPI 3.1 `webhooks`: one POST per type (its latest version), and each version's event schema in components. */
export function openApiWebhooks(catalog: Catalog): { webhooks: Record<string, unknown>; schemas: Record<string, unknown> } {
  const schemas: Record<string, unknown> = {};
  for (const entry of catalog.entries) schemas[`Event.${messageName(entry)}`] = eventSchema(entry);
  const webhooks: Record<string, unknown> = {};
  for (const type of catalog.types) {
    const latest = catalog.get(type)!;
    webhooks[type] = {
      post: {
        summary: latest.title,
        description: `${latest.description}${deprecation(latest)}`,
        ...(latest.deprecated ? { deprecated: true } : {}),
        tags: ['Events we send'],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/Event.${messageName(latest)}` } } },
        },
        responses: { '2XX': { description: 'Received; any other answer (or none in 10 s) is retried on the O6 schedule' } },
      },
    };
  }
  return { webhooks, schemas };
}
