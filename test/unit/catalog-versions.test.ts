// M9: a schema edit that would refuse an event its published version accepted needs a new version. Every published
// version is kept as a snapshot (test/fixtures/catalog-published/, copied there when the version is published);
// the current schema of that version must accept every example of the snapshot and be structurally no narrower.
// Subscriptions take the latest version unless pinned (`payment.succeeded@1`).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CATALOG, loadCatalog } from '../../src/catalog/catalog.js';
import { breakingChanges } from '../../src/catalog/compatibility.js';
import { SCHEMA_FILES } from '../../src/catalog/events/index.js';
import { namesOtherVersion, subscribesTo } from '../../src/catalog/subscriptions.js';
import { createEventValidator } from '../../src/catalog/validate.js';

const folder = new URL('../fixtures/catalog-published/', import.meta.url);
const published = Object.fromEntries(
  readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, folder), 'utf8')) as Record<string, unknown>]),
);
const validator = createEventValidator(CATALOG);

describe('M9 published versions stay compatible', () => {
  it('M9 every catalog version has its published snapshot, and no published version was removed', () => {
    expect(Object.keys(published).sort()).toEqual(Object.keys(SCHEMA_FILES).sort());
  });

  it.each(Object.keys(published))(
    'M9 %s: the current schema accepts what the published one did (else make a new version)',
    (file) => {
      const snapshot = published[file]!;
      const current = SCHEMA_FILES[file] as Record<string, unknown>;
      expect(breakingChanges(snapshot, current)).toEqual([]);
      for (const example of snapshot.examples as unknown[])
        expect(validator.check(snapshot['x-event-type'] as string, snapshot['x-version'] as number, example)).toEqual({
          ok: true,
        });
    },
  );

  const base = {
    type: 'object',
    required: ['id'],
    properties: {
      id: { type: 'string' },
      amount: { type: 'integer' },
      kind: { enum: ['a', 'b'] },
      note: { type: 'string', maxLength: 100 },
    },
  };
  const edit = (change: (s: typeof base & Record<string, unknown>) => void) => {
    const copy = structuredClone(base) as typeof base & Record<string, unknown>;
    change(copy);
    return copy;
  };
  it.each([
    ['a newly required field', edit((s) => s.required.push('amount')), ['data.object.amount: newly required']],
    [
      'integer → string',
      edit((s) => (s.properties.amount = { type: 'string' })),
      ['data.object.amount: type narrowed to string'],
    ],
    ['an enum value dropped', edit((s) => (s.properties.kind = { enum: ['a'] })), ['data.object.kind: enum lost a value']],
    ['a lower maxLength', edit((s) => (s.properties.note.maxLength = 50)), ['data.object.note: maxLength lowered']],
    [
      'additional properties refused',
      edit((s) => (s.additionalProperties = false)),
      ['data.object: additional properties refused'],
    ],
    [
      'a new constrained field',
      edit((s) => Object.assign(s.properties, { fee: { type: 'integer' } })),
      ['data.object.fee: a constraint on a formerly open property'],
    ],
    ['an unknown keyword', edit((s) => (s.not = { required: ['x'] })), ['data.object: not added or changed']],
    ['integer → number (wider)', edit((s) => (s.properties.amount = { type: 'number' })), []],
    ['an enum value added', edit((s) => (s.properties.kind = { enum: ['a', 'b', 'c'] })), []],
    ['a field no longer required', edit((s) => (s.required = [])), []],
    ['a new field described only', edit((s) => Object.assign(s.properties, { fee: { description: 'any value' } })), []],
    ['a higher maxLength', edit((s) => (s.properties.note.maxLength = 200)), []],
  ])('M9 %s → %j', (_, current, expected) => {
    expect(breakingChanges(base, current)).toEqual(expected);
  });
});

describe('M9 endpoints subscribe to a version, or to the latest', () => {
  const v1 = SCHEMA_FILES['payment.succeeded.v1.json'] as Record<string, unknown>;
  const two = loadCatalog({
    'payment.succeeded.v1.json': v1,
    'payment.succeeded.v2.json': { ...v1, 'x-version': 2, title: 'payment.succeeded v2' },
  });
  const latest = two.get('payment.succeeded')!.version;

  it.each([
    [['payment.succeeded'], 2, true],
    [['payment.succeeded'], 1, false],
    [['payment.succeeded@1'], 1, true],
    [['payment.succeeded@1'], 2, false],
    [['*'], 1, false],
    [['payment.*'], 2, true],
    [['payment.succeeded@1', 'payment.succeeded'], 1, true],
  ] as const)('M9 %j takes a v%i event: %s', (patterns, version, expected) => {
    expect(subscribesTo(patterns, 'payment.succeeded', version, latest)).toBe(expected);
  });

  it('M9 an endpoint that names the type in another version is counted (visible), one that does not name it is not', () => {
    expect(namesOtherVersion(['payment.succeeded@1'], 'payment.succeeded', 2, latest)).toBe(true);
    expect(namesOtherVersion(['payment.succeeded'], 'payment.succeeded', 1, latest)).toBe(true);
    expect(namesOtherVersion(['refund.*'], 'payment.succeeded', 1, latest)).toBe(false);
    expect(namesOtherVersion(['payment.succeeded@1'], 'payment.succeeded', 1, latest)).toBe(false);
  });
});
