// I1 provider adapters: Stripe-style and generic HMAC verification (rotation, tolerance, constant-time compare)
// and extraction of the normalized event from each sandbox provider's JSON.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { createHmacAdapter } from '../../src/providers/hmac.js';
import { createStripeAdapter } from '../../src/providers/stripe.js';
import { PROVIDER_EVENT_TYPES } from '../../src/shared/inbound.js';
import { hmacPayload, stripePayload } from '../../src/sandbox/payloads.js';
import { hmacSignature, stripeSignatureHeader } from '../../src/sandbox/signing.js';
import { reasonOf } from '../helpers/provider-refusal.js';

const SECRET = 'whsec_unit_0123456789';
const stripe = createStripeAdapter({ provider: 'p-stripe', secret: SECRET, toleranceSeconds: 300 });
const NOW = new Date('2026-12-01T09:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const event = { type: 'payment.succeeded' as const, reference: 'pi_123', amountMinor: 1250, currency: 'eur', effectiveAt: NOW };

describe('I1 Stripe-style scheme', () => {
  const { body } = stripePayload({ ...event, id: 'evt_1' });
  const raw = Buffer.from(body);

  it('I1 accepts a header signed by the Stripe npm library (generateTestHeaderString)', () => {
    const header = new Stripe('sk_test_x').webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: T });
    expect(reasonOf(() => stripe.verify(raw, { 'stripe-signature': header }, NOW))).toBeUndefined();
  });

  it('I1 accepts when any of several v1 matches (provider rotating its secret)', () => {
    const header = stripeSignatureHeader(body, ['whsec_old_other', SECRET], T);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(reasonOf(() => stripe.verify(raw, { 'stripe-signature': header }, NOW))).toBeUndefined();
  });

  it.each([
    ['missing header', {}, 'missing_signature'],
    ['no t=', { 'stripe-signature': 'v1=' + 'a'.repeat(64) }, 'malformed_signature'],
    ['no v1=', { 'stripe-signature': `t=${T},v0=abc` }, 'malformed_signature'],
    ['wrong secret', { 'stripe-signature': stripeSignatureHeader(body, 'whsec_wrong', T) }, 'signature_mismatch'],
    ['other body', { 'stripe-signature': stripeSignatureHeader(body + ' ', SECRET, T) }, 'signature_mismatch'],
    ['stale (301 s old)', { 'stripe-signature': stripeSignatureHeader(body, SECRET, T - 301) }, 'stale_timestamp'],
    ['future (301 s ahead)', { 'stripe-signature': stripeSignatureHeader(body, SECRET, T + 301) }, 'future_timestamp'],
  ])('I3 refuses %s', (_name, headers, reason) => {
    expect(reasonOf(() => stripe.verify(raw, headers, NOW))).toBe(reason);
  });

  it('I1 accepts the edges of the 300 s tolerance', () => {
    for (const t of [T - 300, T + 300]) {
      expect(reasonOf(() => stripe.verify(raw, { 'stripe-signature': stripeSignatureHeader(body, SECRET, t) }, NOW))).toBeUndefined();
    }
  });

  it('I1 extracts id, type, reference, minor amount, upper-case currency and effective time', () => {
    expect(stripe.extract(raw)).toEqual({
      providerEventId: 'evt_1',
      type: 'payment.succeeded',
      paymentReference: 'pi_123',
      amountMinor: '1250',
      currency: 'EUR',
      effectiveAt: NOW.toISOString(),
    });
  });

  it('I1 a refund points at its payment through payment_intent', () => {
    const refund = stripe.extract(Buffer.from(stripePayload({ ...event, type: 'refund.succeeded', amountMinor: 300 }).body));
    expect(refund).toMatchObject({ type: 'refund.succeeded', paymentReference: 'pi_123', amountMinor: '300' });
  });

  it.each([
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'invalid_utf8'],
    ['invalid JSON', Buffer.from('{"id": '), 'invalid_json'],
    ['an array', Buffer.from('[]'), 'invalid_fields'],
    ['no id', Buffer.from(JSON.stringify({ type: 'payment_intent.succeeded', created: T, data: { object: { id: 'pi', amount: 1, currency: 'usd' } } })), 'invalid_fields'],
    ['a negative amount', Buffer.from(JSON.stringify({ id: 'evt', type: 'payment_intent.succeeded', created: T, data: { object: { id: 'pi', amount: -1, currency: 'usd' } } })), 'invalid_fields'],
    ['a fractional amount', Buffer.from(JSON.stringify({ id: 'evt', type: 'payment_intent.succeeded', created: T, data: { object: { id: 'pi', amount: 1.5, currency: 'usd' } } })), 'invalid_fields'],
    ['a bad currency', Buffer.from(JSON.stringify({ id: 'evt', type: 'payment_intent.succeeded', created: T, data: { object: { id: 'pi', amount: 1, currency: 'dollars' } } })), 'invalid_fields'],
    ['no created', Buffer.from(JSON.stringify({ id: 'evt', type: 'payment_intent.succeeded', data: { object: { id: 'pi', amount: 1, currency: 'usd' } } })), 'invalid_fields'],
    ['an unhandled type', Buffer.from(JSON.stringify({ id: 'evt', type: 'customer.created', created: T, data: { object: {} } })), 'unsupported_type'],
  ])('I1 refuses a payload with %s', (_name, raw, reason) => {
    expect(reasonOf(() => stripe.extract(raw))).toBe(reason);
  });
});

describe('I1 generic HMAC scheme', () => {
  const secret = 'hmac-unit-secret';
  const { body } = hmacPayload({ ...event, id: 'hev_1', type: 'payment.failed' });
  const raw = Buffer.from(body);

  it.each(['hex', 'base64'] as const)('I1 verifies a %s HMAC-SHA256 of the raw body in the profile header', (encoding) => {
    const adapter = createHmacAdapter({ provider: 'p-hmac', secret, header: 'X-Sandbox-Signature', encoding });
    const headers = { 'x-sandbox-signature': hmacSignature(body, secret, encoding) };
    expect(reasonOf(() => adapter.verify(raw, headers, NOW))).toBeUndefined();
    expect(reasonOf(() => adapter.verify(Buffer.from(body + '\n'), headers, NOW))).toBe('signature_mismatch');
  });

  it.each([
    ['missing', {}, 'missing_signature'],
    ['hex when base64 is configured', { 'x-sig': hmacSignature(body, secret, 'hex') }, 'malformed_signature'],
    ['garbage', { 'x-sig': '!!!!' }, 'malformed_signature'],
    ['another secret', { 'x-sig': hmacSignature(body, 'other', 'base64') }, 'signature_mismatch'],
  ])('I3 refuses a signature that is %s', (_name, headers, reason) => {
    const adapter = createHmacAdapter({ provider: 'p-hmac', secret, header: 'X-Sig', encoding: 'base64' });
    expect(reasonOf(() => adapter.verify(raw, headers, NOW))).toBe(reason);
  });

  it('I1 extracts the normalized event from the HMAC provider format', () => {
    const adapter = createHmacAdapter({ provider: 'p-hmac', secret, header: 'X-Sig', encoding: 'hex' });
    expect(adapter.extract(raw)).toEqual({
      providerEventId: 'hev_1',
      type: 'payment.failed',
      paymentReference: 'pi_123',
      amountMinor: '1250',
      currency: 'EUR',
      effectiveAt: NOW.toISOString(),
    });
  });
});

describe('I1 every platform event type round-trips through each provider format', () => {
  const hmacAdapter = createHmacAdapter({ provider: 'p-hmac', secret: 's', header: 'X-Sig', encoding: 'hex' });
  it.each(PROVIDER_EVENT_TYPES.map((type) => [type]))('I1 %s', (type) => {
    const sent = { id: `evt_${type}`, type, reference: 'pi_rt', amountMinor: '123', currency: 'jpy', effectiveAt: NOW, objectId: 'obj_rt' };
    const item = ['refund.succeeded', 'chargeback.created', 'payment.reversed'].includes(type);
    const expected = {
      providerEventId: `evt_${type}`,
      type,
      paymentReference: 'pi_rt',
      amountMinor: '123',
      currency: 'JPY',
      effectiveAt: NOW.toISOString(),
      ...(item ? { providerObjectId: 'obj_rt' } : {}),
    };
    expect(stripe.extract(Buffer.from(stripePayload(sent).body))).toEqual(expected);
    expect(hmacAdapter.extract(Buffer.from(hmacPayload(sent).body))).toEqual(expected);
  });

  it('L1 a provider that sends no object id: the event has none; a legacy reversal shaped as the payment intent still reads', () => {
    const { providerObjectId: _, ...withoutId } = { providerObjectId: '', providerEventId: 'evt_n', type: 'refund.succeeded' as const, paymentReference: 'pi_n', amountMinor: '5', currency: 'EUR', effectiveAt: NOW.toISOString() };
    const sent = { id: 'evt_n', type: 'refund.succeeded' as const, reference: 'pi_n', amountMinor: 5, currency: 'EUR', effectiveAt: NOW, objectId: null };
    expect(stripe.extract(Buffer.from(stripePayload(sent).body))).toEqual(withoutId);
    expect(hmacAdapter.extract(Buffer.from(hmacPayload(sent).body))).toEqual(withoutId);
    const legacy = JSON.stringify({ id: 'evt_l', type: 'payment_intent.reversed', created: NOW.getTime() / 1000, data: { object: { id: 'pi_l', amount: 5, currency: 'eur' } } });
    expect(stripe.extract(Buffer.from(legacy))).toMatchObject({ paymentReference: 'pi_l', type: 'payment.reversed' });
    expect(stripe.extract(Buffer.from(legacy)).providerObjectId).toBeUndefined();
    const badId = JSON.stringify({ event_id: 'h', event_type: 'refund.completed', occurred_at: NOW.toISOString(), payment: { reference: 'p', amount_minor: '1', currency: 'EUR' }, object_id: '' });
    expect(() => hmacAdapter.extract(Buffer.from(badId))).toThrow(/object_id/);
  });
});
