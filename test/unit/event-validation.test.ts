// O21: the catalog's validators: one compiled per type and version, a refusal naming the schema path and Ajv's
// message, never the event's data (a producer's keys and values stay out of the quarantine detail, logs and metrics).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../src/catalog/catalog.js';
import { createEventValidator } from '../../src/catalog/validate.js';
import { parseEnvelope } from '../../src/outbound/envelope.js';

const validator = createEventValidator(CATALOG);
const payment = { id: 'pay_1', object: 'payment', amount: 2000, currency: 'eur' };

describe('O21 events are checked against their catalog schema', () => {
  it.each([
    ['a valid payment', 'payment.succeeded', 1, payment, { ok: true }],
    [
      'a float amount',
      'payment.succeeded',
      1,
      { ...payment, amount: 20.5 },
      { ok: false, reason: 'schema_invalid', detail: 'data.object.amount must be integer' },
    ],
    [
      'an amount as a string',
      'payment.succeeded',
      1,
      { ...payment, amount: '2000' },
      { ok: false, reason: 'schema_invalid', detail: 'data.object.amount must be integer' },
    ],
    [
      'no currency',
      'payment.succeeded',
      1,
      { id: 'pay_1', object: 'payment', amount: 1 },
      { ok: false, reason: 'schema_invalid', detail: "data.object must have required property 'currency'" },
    ],
    [
      'the wrong object',
      'refund.succeeded',
      1,
      payment,
      { ok: false, reason: 'schema_invalid', detail: "data.object must have required property 'payment'" },
    ],
    [
      'an unknown type',
      'payment.nope',
      1,
      payment,
      { ok: false, reason: 'unknown_event_type', detail: 'payment.nope is not in the event catalog' },
    ],
    [
      'an unknown version',
      'payment.succeeded',
      2,
      payment,
      { ok: false, reason: 'unknown_event_version', detail: 'payment.succeeded has no version 2 in the catalog' },
    ],
  ])('O21 %s', (_, type, version, object, expected) => {
    expect(validator.check(type, version, object)).toEqual(expected);
  });

  it('O21 property: a refusal detail never carries a key or value of the event', () => {
    const marker = fc.stringMatching(/^[A-Z][A-Za-z0-9]{5,12}$/).map((s) => `Q${s}`);
    fc.assert(
      fc.property(
        marker,
        fc.constantFrom(...CATALOG.types),
        fc.oneof(fc.constant('key'), fc.constant('value'), fc.constant('nested')),
        (m, type, where) => {
          const example = CATALOG.get(type)!.examples[0]!;
          const key = Object.keys(example).find((k) => k !== 'object')!;
          const object =
            where === 'key'
              ? { ...example, [m]: 1, object: m }
              : where === 'value'
                ? { ...example, [key]: { [m]: m } }
                : { ...example, id: [m, { [m]: m }] };
          const result = validator.check(type, 1, object);
          expect(result.ok).toBe(false);
          if (!result.ok) expect(result.detail).not.toContain(m);
        },
      ),
    );
  });

  it('M9 the envelope carries the version (absent = 1), and the body keeps it only when given', () => {
    const base = {
      id: 'evt_1',
      object: 'event',
      type: 'payment.succeeded',
      created: 1,
      livemode: false,
      merchant_account: 'a',
      data: { object: payment },
    };
    const plain = parseEnvelope(Buffer.from(JSON.stringify(base)));
    const pinned = parseEnvelope(Buffer.from(JSON.stringify({ ...base, version: 1 })));
    expect(plain.ok && [plain.event.version, JSON.parse(plain.event.body.toString()).version]).toEqual([1, undefined]);
    expect(pinned.ok && [pinned.event.version, JSON.parse(pinned.event.body.toString()).version]).toEqual([1, 1]);
    expect(parseEnvelope(Buffer.from(JSON.stringify({ ...base, version: 1.5 })))).toMatchObject({
      ok: false,
      reason: 'malformed_version',
    });
  });
});
