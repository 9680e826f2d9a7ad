// M10: the catalog published as the ecosystem reads it: the AsyncAPI 3.0 document passes @asyncapi/parser with no
// error, the OpenAPI 3.1 webhooks pass an OpenAPI 3.1 validator, and each example event validates against the
// published event schema (so what the documents promise is what a merchant receives).
import { Parser } from '@asyncapi/parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../src/catalog/catalog.js';
import { asyncApiDocument, eventSchema, openApiWebhooks } from '../../src/catalog/publish.js';
import { newAjv } from '../../src/catalog/validate.js';

describe('M10 the catalog as AsyncAPI and OpenAPI webhooks', () => {
  it('M10 the AsyncAPI 3.0 document parses without errors and has one message per type and version', async () => {
    const { document, diagnostics } = await new Parser().parse(JSON.stringify(asyncApiDocument(CATALOG)));
    expect(diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join('.')}: ${d.message}`)).toEqual([]);
    expect(document).toBeDefined();
    const names = document!
      .allMessages()
      .all()
      .map((m) => m.id())
      .sort();
    expect(names).toEqual(CATALOG.entries.map((e) => `${e.type}.v${e.version}`).sort());
    const succeeded = document!
      .allMessages()
      .all()
      .find((m) => m.id() === 'payment.succeeded.v1')!;
    expect(succeeded.payload()!.properties()!.data!.properties()!.object!.required()).toContain('currency');
  }, 60_000); // the parser loads its spec schemas and rulesets on first use: seconds on a busy machine

  it('M10 an OpenAPI 3.1 document with the webhooks section validates, one POST per type', async () => {
    const { webhooks, schemas } = openApiWebhooks(CATALOG);
    const document = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: {}, webhooks, components: { schemas } };
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(webhooks).sort()).toEqual([...CATALOG.types]);
  });

  it('M10 every example event validates against its published event schema; a float amount does not', () => {
    const ajv = newAjv();
    for (const entry of CATALOG.entries) {
      const schema = eventSchema(entry);
      const validate = ajv.compile(schema);
      for (const example of schema.examples as unknown[])
        expect({ entry: entry.title, ok: validate(example), errors: validate.errors ?? null }).toEqual({
          entry: entry.title,
          ok: true,
          errors: null,
        });
    }
    const validate = ajv.compile(eventSchema(CATALOG.get('payment.succeeded')!));
    const example = (eventSchema(CATALOG.get('payment.succeeded')!).examples as { data: { object: object } }[])[0]!;
    expect(validate({ ...example, data: { object: { ...example.data.object, amount: 1.5 } } })).toBe(false);
  });
});
