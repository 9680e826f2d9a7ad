// M8: the event catalog: every schema file is registered and well-formed, every example validates, every type ApiPay
// emits (ledger, endpoint status, ping, `apipay trigger`) and the demo publishes is in it with valid data, and
// subscriptions name types that exist (a typo is refused with the nearest name; `*` and prefix wildcards stay).
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CATALOG, loadCatalog } from '../../src/catalog/catalog.js';
import { SCHEMA_FILES } from '../../src/catalog/events/index.js';
import { checkPattern, deprecatedSubscriptions, nearest, subscribesTo } from '../../src/catalog/subscriptions.js';
import { createEventValidator } from '../../src/catalog/validate.js';
import { LEDGER_EVENT_TYPES, ledgerEventObject } from '../../src/ledger/announce.js';
import { statusChangeObject } from '../../src/outbound/endpoint-status.js';
import { pingObject, TEST_EVENT_TYPE } from '../../src/outbound/test-event.js';
import { testEventEnvelope, TRIGGER_TYPES } from '../../src/outbound/test-events.js';
import { DEMO_TYPES, demoObject } from '../../scripts/demo/events.js';
import type { PostingKind } from '../../src/ledger/postings.js';

const validator = createEventValidator(CATALOG);
const expectValid = (type: string, object: unknown) =>
  expect({ type, ...validator.check(type, 1, object) }).toEqual({ type, ok: true });

describe('M8 the catalog files', () => {
  it('M8 registers every JSON file of src/catalog/events in its index', () => {
    const files = readdirSync(new URL('../../src/catalog/events/', import.meta.url)).filter((f) => f.endsWith('.json'));
    expect(Object.keys(SCHEMA_FILES).sort()).toEqual(files.sort());
  });

  it('M8 every version has a description, a source and examples, and each example validates against its schema', () => {
    expect(CATALOG.entries.length).toBeGreaterThanOrEqual(14);
    for (const entry of CATALOG.entries) {
      expect(entry.description.length).toBeGreaterThan(10);
      expect(entry.examples.length).toBeGreaterThan(0);
      for (const example of entry.examples)
        expect({ entry: entry.title, ...validator.check(entry.type, entry.version, example) }).toEqual({
          entry: entry.title,
          ok: true,
        });
    }
  });

  it.each([
    ['a name that is not <type>.v<n>.json', 'payment.json', {}],
    ['x-event-type other than the file name', 'a.b.v1.json', { ...(SCHEMA_FILES['ping.v1.json'] as object) }],
    ['no examples', 'ping.v1.json', { ...(SCHEMA_FILES['ping.v1.json'] as object), examples: [] }],
    ['a deprecation without a date', 'ping.v1.json', { ...(SCHEMA_FILES['ping.v1.json'] as object), deprecated: true }],
    ['a version gap', 'ping.v2.json', { ...(SCHEMA_FILES['ping.v1.json'] as object), 'x-version': 2 }],
  ])('M8 refuses a catalog with %s, naming the file', (_, file, document) => {
    expect(() => loadCatalog({ [file]: document })).toThrow(/event catalog/);
  });
});

describe('M8 every event ApiPay sends is a catalog event with valid data', () => {
  it('M8 the ledger settled events (src/ledger/announce.ts), one per posting kind', () => {
    for (const [kind, type] of Object.entries(LEDGER_EVENT_TYPES) as [PostingKind, string][]) {
      const posting = {
        idempotencyKey: 'k',
        kind,
        provider: 'stripe',
        paymentReference: 'pay_ref_1',
        currency: 'EUR',
        amountMinor: kind === 'adjustment' ? -150n : 2000n,
        entries: [],
      };
      const meta = {
        providerEventId: 'evt_1',
        reconciliationId: 'reconcile:stripe:evt_1',
        effectiveAt: '2026-12-01T09:30:00Z',
        actor: 'system',
      };
      expectValid(type, ledgerEventObject('ltx_01jd2m3k4n5p6q7r8s9t0v1w2x', new Date('2026-12-01T09:30:02Z'), posting, meta));
    }
  });

  it('M8 endpoint.disabled and endpoint.enabled (M4), with and without a reason', () => {
    const endpoint = { id: 'we_01jd2m3k4n5p6q7r8s9t0v1w2x', merchantAccount: 'acct_1', livemode: false };
    for (const [from, to, reason, actor] of [
      ['enabled', 'disabled', 'O13', 'system'],
      ['disabled', 'enabled', null, 'operator:k'],
    ] as const)
      expectValid(
        `endpoint.${to}`,
        statusChangeObject('esc_01jd2m3k4n5p6q7r8s9t0v1w2y', { endpoint, from, to, reason, actor, at: new Date() }),
      );
  });

  it('M8 the test event (M6) and every `apipay trigger` sample (M7)', () => {
    expectValid(TEST_EVENT_TYPE, pingObject('we_01jd2m3k4n5p6q7r8s9t0v1w2x'));
    for (const type of TRIGGER_TYPES) expectValid(type, testEventEnvelope(type, 'acct_1', new Date())!.data.object);
  });

  it('M8 the demo producer (scripts/demo) publishes only catalog types with valid data', () => {
    for (let sequence = 1; sequence <= 9; sequence++) {
      const type = DEMO_TYPES[sequence % DEMO_TYPES.length]!;
      expectValid(type, demoObject(type, sequence));
    }
  });
});

describe('M8 subscriptions name types that exist', () => {
  it.each([
    ['*', true],
    ['payment.*', true],
    ['payment.succeeded', true],
    ['payment.succeeded@1', true],
    ['payment.suceeded', 'did you mean payment.succeeded?'],
    ['payment.succeeded@2', 'did you mean payment.succeeded@1?'],
    ['paymnt.*', 'did you mean payment.*?'],
    ['customer.created', 'customer.created is not an event type'],
    ['Payment.Succeeded', 'is not an event type pattern'],
    ['payment.*.x', 'is not an event type pattern'],
  ])('M8 %s → %s', (pattern, expected) => {
    const check = checkPattern(CATALOG, pattern);
    if (expected === true) expect(check).toEqual({ ok: true });
    else expect(check.ok === false && check.message).toContain(expected);
  });

  it('M8 property: one typing slip in any catalog type is refused with that type suggested', () => {
    const slip = fc.record({
      type: fc.constantFrom(...CATALOG.types),
      at: fc.nat(),
      char: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz_'),
    });
    fc.assert(
      fc.property(slip, ({ type, at, char }) => {
        const i = at % type.length;
        const typo = type.slice(0, i) + char + type.slice(i + 1);
        fc.pre(typo !== type && !CATALOG.types.includes(typo) && /^[a-z]/.test(typo));
        const check = checkPattern(CATALOG, typo);
        expect(check.ok).toBe(false);
        // Another type may be as close (payment.settled / payment.failed): the suggestion is at most one edit away.
        expect(check.ok === false && check.suggestion !== undefined).toBe(true);
      }),
    );
  });

  it('M8 matching: * and prefix wildcards take every type below them; a pinned version only that version', () => {
    expect(subscribesTo(['*'], 'ping')).toBe(true);
    expect(subscribesTo(['payment.*'], 'payment.settled')).toBe(true);
    expect(subscribesTo(['payment.*'], 'refund.settled')).toBe(false);
    expect(subscribesTo(['payment.succeeded@1'], 'payment.succeeded', 1)).toBe(true);
    expect(subscribesTo(['payment.succeeded@1'], 'payment.succeeded', 2)).toBe(false);
    expect(subscribesTo(['payment.succeeded'], 'payment.succeeded', 2)).toBe(true);
    expect(nearest('zzzzzzzzzz', CATALOG.types)).toBeUndefined();
  });

  it('M8 a subscriber of a deprecated type is told (not one that asked for *)', () => {
    const deprecated = CATALOG.entries.filter((e) => e.deprecated).map((e) => e.type);
    expect(deprecated).toContain('refund.created');
    expect(deprecatedSubscriptions(CATALOG, ['refund.*', 'payment.succeeded'])).toEqual([
      { pattern: 'refund.*', type: 'refund.created', on: '2027-03-31', replacedBy: 'refund.succeeded' },
    ]);
    expect(deprecatedSubscriptions(CATALOG, ['*'])).toEqual([]);
  });
});
