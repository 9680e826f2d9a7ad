// Issue 31's done-when: each answer of docs/architecture.md "Where to change what" done once, here or in the test it
// names. Here: the retry waits (the profile alone; a running delivery keeps its input's schedule), an outbound event
// type (one schema file and its line in the index: validated, subscribable, published, typed and documented), an
// admin route (declared once: in the OpenAPI document with its role, and missing from the matrix until its row is
// added) and a console page (a route the matrix test finds without a row). A provider with a new scheme is done in
// test/unit/stripe-api.test.ts ("a scheme declared in one file"), a retry rule in test/unit/retry-policy.test.ts.
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { accessRules, adminRoute } from '../../src/api/admin/access.js';
import { loadCatalog } from '../../src/catalog/catalog.js';
import { SCHEMA_FILES } from '../../src/catalog/events/index.js';
import { asyncApiDocument, openApiWebhooks } from '../../src/catalog/publish.js';
import { checkPattern, subscribesTo } from '../../src/catalog/subscriptions.js';
import { createEventValidator } from '../../src/catalog/validate.js';
import { deliveryInput } from '../../src/outbound/delivery-start.js';
import { scheduleWait } from '../../src/outbound/retry-policy.js';
import { eventsSection } from '../../scripts/catalog/merchant-docs.js';
import { generateTypes } from '../../scripts/catalog/types.js';
import { ADMIN_ROUTES, PAGE_ROUTES, pageRouteKeys } from '../fixtures/access-matrix.js';
import { testProfile } from '../helpers/profile.js';

describe('where to change what: the retry waits (1 place: the profile)', () => {
  it('outbound.retry_schedule alone sets a new delivery’s waits; the input carries them, so a running one keeps its own', () => {
    const before = testProfile();
    const after = testProfile({ outbound: { retry_schedule: ['2m', '10m'] } });
    const started = deliveryInput(before, 'whd_1');
    const next = deliveryInput(after, 'whd_2');
    expect(next.retryScheduleMs).toEqual([120_000, 600_000]);
    expect(scheduleWait(next.retryScheduleMs, 0)).toBe(120_000);
    // The delivery started before the change reads its waits from its own input, not from the profile.
    expect(started.retryScheduleMs).toEqual(before.outbound.retry_schedule);
    expect(scheduleWait(started.retryScheduleMs, 0)).not.toBe(120_000);
  });
});

describe('where to change what: an outbound event type (1 schema file + 1 line in src/catalog/events/index.ts)', () => {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    'x-event-type': 'invoice.paid',
    'x-version': 1,
    'x-source': 'producer',
    title: 'Invoice paid',
    description: 'An invoice of the merchant was paid in full.',
    type: 'object',
    required: ['id', 'amount_minor'],
    properties: { id: { type: 'string' }, amount_minor: { type: 'string', pattern: '^[0-9]+$' } },
    additionalProperties: false,
    examples: [{ id: 'inv_1', amount_minor: '1250' }],
  };
  const catalog = loadCatalog({ ...SCHEMA_FILES, 'invoice.paid.v1.json': schema });

  it('the type is in the catalog, its events are checked against the schema, and endpoints may subscribe to it', () => {
    expect(catalog.types).toContain('invoice.paid');
    const validator = createEventValidator(catalog);
    expect(validator.check('invoice.paid', 1, { id: 'inv_1', amount_minor: '1250' })).toEqual({ ok: true });
    expect(validator.check('invoice.paid', 1, { id: 'inv_1', amount_minor: 12.5 })).toMatchObject({
      ok: false,
      reason: 'schema_invalid',
    });
    expect(checkPattern(catalog, 'invoice.paid')).toEqual({ ok: true });
    expect(checkPattern(catalog, 'invoice.*')).toEqual({ ok: true });
    expect(subscribesTo(['invoice.*'], 'invoice.paid')).toBe(true);
    // Without the file the same event is refused before fan-out, and the subscription names an unknown type.
    const without = loadCatalog(SCHEMA_FILES);
    expect(createEventValidator(without).check('invoice.paid', 1, { id: 'inv_1', amount_minor: '1' })).toMatchObject({
      reason: 'unknown_event_type',
    });
    expect(checkPattern(without, 'invoice.paid').ok).toBe(false);
  });

  it('it is published (AsyncAPI, OpenAPI webhooks), typed for producers and listed for merchants, all generated', async () => {
    expect(JSON.stringify(asyncApiDocument(catalog))).toContain('invoice.paid');
    expect(Object.keys(openApiWebhooks(catalog).webhooks)).toContain('invoice.paid');
    expect(eventsSection(catalog)).toContain('invoice.paid');
    expect(await generateTypes(catalog)).toMatch(/InvoicePaid/);
  }, 30_000);
});

describe('where to change what: an admin route (its route module + its matrix row)', () => {
  it('declared once with adminRoute: the OpenAPI document and the role check read it; the matrix has no row until one is added', () => {
    const admin = new OpenAPIHono();
    const route = adminRoute(
      { role: 'viewer', merchant: true },
      createRoute({
        method: 'get',
        path: '/widgets/{id}',
        request: { params: z.object({ id: z.string() }) },
        responses: { 200: { description: 'A widget' } },
      }),
    );
    admin.openapi(route, (c) => c.json({ id: c.req.valid('param').id }, 200));
    const doc = admin.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } });
    const operation = doc.paths!['/widgets/{id}']!.get as Record<string, unknown>;
    expect(operation['x-required-role']).toBe('viewer');
    expect(operation['x-merchant-access']).toBe('own');
    expect(accessRules(admin).get('GET /widgets/:id')).toEqual({ role: 'viewer', merchant: true });
    // test/integration/admin-roles.test.ts compares the document's routes with ADMIN_ROUTES: this one has no row.
    expect(ADMIN_ROUTES['GET /widgets/{id}']).toBeUndefined();
    expect(Object.keys(ADMIN_ROUTES).length).toBeGreaterThan(15);
  });
});

describe('where to change what: a console or portal page (its page file, its register call, its matrix row)', () => {
  it('a page the console registers is a route the matrix test finds, and fails without its row in PAGE_ROUTES', () => {
    const app = new Hono();
    app.get('/console/widgets', (c) => c.html('<p>widgets</p>'));
    app.all('/console/*', (c) => c.notFound());
    const keys = pageRouteKeys(app.routes);
    expect(keys).toEqual(new Set(['GET /widgets']));
    expect([...keys].filter((k) => !PAGE_ROUTES[k])).toEqual(['GET /widgets']);
  });
});
