// R21 over the provider payload parsers (no servers): whatever a provider signs, extract() returns an event every
// reader downstream can hold (a time toISOString and PostgreSQL take, an amount the bigint columns take) or throws a
// PayloadError (the ingress's 400 naming the field, or 200 ignored). Any other throw is the ingress's 500, which a
// provider retries forever: `created: 9999999999999` was one (a RangeError from toISOString).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hmacPayload, stripePayload } from '../../src/sandbox/payloads.js';
import { createHmacAdapter } from '../../src/providers/hmac.js';
import { MAX_AMOUNT_MINOR } from '../../src/providers/payload.js';
import { createStripeAdapter } from '../../src/providers/stripe.js';
import { PayloadError, type ProviderAdapter } from '../../src/providers/types.js';
import type { NormalizedProviderEvent } from '../../src/shared/inbound.js';
import { hostileJson, hostileNumber, runs } from './fuzz.js';

const stripe = createStripeAdapter({ provider: 'fz-stripe', secret: 's', toleranceSeconds: 300 });
const hmac = createHmacAdapter({ provider: 'fz-hmac', secret: 's', header: 'X-Sig', encoding: 'hex' });
const TYPES = ['payment.succeeded', 'payment.failed', 'refund.succeeded', 'chargeback.created'] as const;

/** Every leaf of a JSON document, by path, so that a property can replace one. */
function leaves(node: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof node !== 'object' || node === null) return [at];
  return Object.entries(node).flatMap(([key, child]) => leaves(child, [...at, Array.isArray(node) ? Number(key) : key]));
}
function replaced(document: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = (Array.isArray(document) ? [...document] : { ...(document as object) }) as Record<string | number, unknown>;
  if (path.length === 1 && value === undefined) delete copy[path[0]!];
  else copy[path[0]!] = replaced(copy[path[0]!], path.slice(1), value);
  return copy;
}

/** The outcome of one extract: the event, or the PayloadError; anything else fails the property. */
function outcome(adapter: ProviderAdapter, body: Buffer): { event: NormalizedProviderEvent } | { refused: PayloadError } {
  try {
    return { event: adapter.extract(body) };
  } catch (error) {
    if (error instanceof PayloadError) return { refused: error };
    throw new Error(`extract threw ${(error as Error)?.name}: ${(error as Error)?.message} (a 500 at the ingress)`, {
      cause: error,
    });
  }
}

const document = fc
  .record({
    stripe: fc.boolean(),
    type: fc.constantFrom(...TYPES),
    amount: fc.nat(),
    days: fc.integer({ min: -20_000, max: 2_900_000 }),
  })
  .map(({ stripe: s, type, amount, days }) => {
    const event = {
      type,
      reference: 'pi_fz',
      amountMinor: amount,
      currency: 'EUR',
      effectiveAt: new Date(Date.UTC(2026, 0, 1) + days * 86_400_000),
    } as const;
    return { adapter: s ? stripe : hmac, body: JSON.parse((s ? stripePayload(event) : hmacPayload(event)).body) as unknown };
  });

describe('R21 provider payload parsers: an event or a PayloadError, never another throw', () => {
  it('R21 one field of a real payload replaced by a hostile number, time string or any JSON (or removed)', () => {
    fc.assert(
      fc.property(
        document,
        fc.nat(),
        fc.oneof({ weight: 3, arbitrary: hostileNumber }, hostileJson, fc.constant(undefined)),
        ({ adapter, body }, index, value) => {
          const paths = leaves(body);
          const mutated = replaced(body, paths[index % paths.length]!, value);
          const result = outcome(adapter, Buffer.from(JSON.stringify(mutated) ?? ''));
          if ('refused' in result) {
            expect(result.refused.message).toMatch(/^body|not valid|type/);
            return;
          }
          const { event } = result;
          const time = Date.parse(event.effectiveAt);
          expect(new Date(time).toISOString()).toBe(event.effectiveAt);
          expect(event.effectiveAt).toMatch(/^\d{4}-/); // a four-digit year: ISO 8601 and PostgreSQL read it
          expect(time).toBeGreaterThanOrEqual(0);
          expect(BigInt(event.amountMinor) <= MAX_AMOUNT_MINOR).toBe(true);
        },
      ),
      runs(3000),
    );
  });

  it('R21 the reported counterexample: created 9999999999999 and an occurred_at in year 0000 are refused naming the field', () => {
    const base = JSON.parse(
      stripePayload({ type: 'payment.succeeded', reference: 'pi_fz', amountMinor: 1, currency: 'EUR' }).body,
    ) as Record<string, unknown>;
    const stripeResult = outcome(stripe, Buffer.from(JSON.stringify({ ...base, created: 9_999_999_999_999 })));
    expect('refused' in stripeResult && stripeResult.refused.message).toMatch(/^body\.created /);
    const hmacBase = JSON.parse(
      hmacPayload({ type: 'payment.succeeded', reference: 'pi_fz', amountMinor: 1, currency: 'EUR' }).body,
    ) as Record<string, unknown>;
    const hmacResult = outcome(hmac, Buffer.from(JSON.stringify({ ...hmacBase, occurred_at: '0000-01-01T00:00:00Z' })));
    expect('refused' in hmacResult && hmacResult.refused.message).toMatch(/^body\.occurred_at /);
  });
});
