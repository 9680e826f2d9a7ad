// O1/O2/O4 envelope parsing without servers: every input becomes an event or a named quarantine reason.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPgText } from '../../src/shared/pg-text.js';
import { parseEnvelope } from '../../src/outbound/envelope.js';
import { subscribes } from '../../src/dispatcher/outbound-handler.js';

const good = {
  id: 'evt_01abc',
  object: 'event',
  type: 'payment.succeeded',
  created: 1_764_547_200,
  livemode: false,
  data: { object: { id: 'pay_1', amount: 100 }, previous_attributes: { amount: 50 } },
  merchant_account: 'acct_1',
};
const without = (key: keyof typeof good) => Object.fromEntries(Object.entries(good).filter(([k]) => k !== key));

describe('O2 envelope validation', () => {
  it.each([
    ['null value', null, 'empty_value'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), 'invalid_utf8'],
    ['invalid JSON', Buffer.from('{"id":'), 'invalid_json'],
    ['a JSON string', Buffer.from('"evt_1"'), 'not_an_object'],
    ['missing id', without('id'), 'missing_id'],
    ['id without evt_', { ...good, id: 'ch_1' }, 'malformed_id'],
    ['missing type', without('type'), 'missing_type'],
    ['type with spaces', { ...good, type: 'payment succeeded' }, 'malformed_type'],
    ['missing created', without('created'), 'missing_created'],
    ['created in ms as a string', { ...good, created: '1764547200000' }, 'malformed_created'],
    ['missing livemode', without('livemode'), 'missing_livemode'],
    ['missing data', without('data'), 'missing_data'],
    ['missing data.object', { ...good, data: {} }, 'missing_data_object'],
    ['missing merchant account', without('merchant_account'), 'missing_merchant_account'],
    ['two different accounts', { ...good, account: 'acct_2' }, 'conflicting_merchant_account'],
    ['R1 U+0000 in merchant_account', { ...good, merchant_account: 'acct_1\u0000' }, 'malformed_merchant_account'],
    ['R1 lone surrogate in account', { ...without('merchant_account'), account: '\ud800acct' }, 'malformed_account'],
    ['R1 over-long merchant_account', { ...good, merchant_account: 'a'.repeat(201) }, 'malformed_merchant_account'],
    ['R1 created past year 9999', { ...good, created: 253_402_300_800 }, 'malformed_created'],
    ['R1 U+0000 in a data key', { ...good, data: { object: { 'k\u0000': 1 } } }, 'malformed_data'],
    ['R1 lone surrogate in previous_attributes', { ...good, data: { ...good.data, previous_attributes: { a: '\udfff' } } }, 'malformed_data'],
    ['R1 a number overflowing to Infinity', Buffer.from(JSON.stringify(good).replace('"amount":100', '"amount":1e999')), 'malformed_data'],
  ])('O2 %s → %s', (_label, input, reason) => {
    const value = input === null ? null : Buffer.isBuffer(input) ? input : Buffer.from(JSON.stringify(input));
    const result = parseEnvelope(value);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });
});

describe('O4 the body serialized once', () => {
  it('O4 keeps data (including siblings of data.object) and puts the merchant account in account, in a fixed key order', () => {
    const result = parseEnvelope(Buffer.from(JSON.stringify({ ...good, extra: 'dropped' })));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({ eventPublicId: 'evt_01abc', merchantAccount: 'acct_1', type: 'payment.succeeded', livemode: false });
    expect(result.event.body.toString()).toBe(
      '{"id":"evt_01abc","object":"event","account":"acct_1","type":"payment.succeeded","created":1764547200,"livemode":false,' +
        '"data":{"object":{"id":"pay_1","amount":100},"previous_attributes":{"amount":50}}}',
    );
  });

  it('O4 accepts account as the merchant account field', () => {
    const result = parseEnvelope(Buffer.from(JSON.stringify({ ...without('merchant_account'), account: 'acct_9' })));
    expect(result.ok && result.event.merchantAccount).toBe('acct_9');
  });

  it.each([
    [['*'], 'refund.created', true],
    [['payment.succeeded'], 'payment.succeeded', true],
    [['payment.succeeded'], 'payment.failed', false],
  ])('O4 endpoint types %j subscribe to %s: %s', (types, type, expected) => {
    expect(subscribes(types, type)).toBe(expected);
  });
});

describe('R1 any envelope is an event PostgreSQL can store or a reason', () => {
  it('R1 property: never throws; an accepted event has storable text fields and a body that parses back to the data', () => {
    const unit = fc.oneof(fc.constantFrom('\u0000', '\ud800', '\udc00', 'é', '\ud83d\ude00'), fc.string({ maxLength: 3 }));
    const text = fc.array(unit, { maxLength: 4 }).map((parts) => parts.join(''));
    const value = fc.oneof(text, fc.integer(), fc.double(), fc.constant(null));
    fc.assert(
      fc.property(text, fc.dictionary(text, value, { maxKeys: 3 }), fc.integer({ min: -1, max: 2 ** 40 }), (account, object, created) => {
        const result = parseEnvelope(Buffer.from(JSON.stringify({ ...good, merchant_account: account, created, data: { object } })));
        if (!result.ok) {
          expect(result.reason).toMatch(/^[a-z_]+$/);
          return;
        }
        expect(isPgText(result.event.merchantAccount)).toBe(true);
        expect(JSON.parse(result.event.body.toString()).data).toEqual(JSON.parse(JSON.stringify({ object })));
      }),
      { seed: 20261201, numRuns: 300 },
    );
  });
});
