// O8–O10: our ApiPay-Signature interoperates with Stripe's verifier both ways; rotation, tolerance and tampering.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, sign, verify, WebhookVerificationError } from '../../src/signing/index.js';

const stripe = new Stripe('sk_test_x');
const secret = 'whsec_dGVzdC1zZWNyZXQtb25lLTAxMjM0NTY3ODlhYmNkZWY=';
const previous = 'whsec_cHJldmlvdXMtc2VjcmV0LTAxMjM0NTY3ODlhYmNkZWY=';
const body = Buffer.from(
  JSON.stringify({ id: 'evt_01test', object: 'event', type: 'payment.succeeded', created: 1_780_000_000, livemode: false, data: { object: { id: 'pay_1', amount: 1250 } } }),
);
const nowSec = () => Math.floor(Date.now() / 1000);

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as Error).message).not.toContain(secret);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('expected a WebhookVerificationError');
}

describe('signing (O8, O9, O10)', () => {
  it('O8 header is named ApiPay-Signature and has the form t=<unix s>,v1=<64 hex>', () => {
    expect(SIGNATURE_HEADER).toBe('ApiPay-Signature');
    expect(sign({ payload: body, secrets: [secret], timestamp: 1_700_000_000 })).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
  });

  it('O8 our header verifies with Stripe\'s own library (constructEvent)', () => {
    const header = sign({ payload: body, secrets: [secret], timestamp: nowSec() });
    const event = stripe.webhooks.constructEvent(body, header, secret);
    expect(event.id).toBe('evt_01test');
  });

  it('O8 a header from Stripe\'s generateTestHeaderString verifies with ours', () => {
    const timestamp = nowSec();
    const header = stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret, timestamp });
    expect(verify(body, header, secret)).toEqual({ timestamp });
    expect(verify(body.toString('utf8'), header, [previous, secret])).toEqual({ timestamp });
  });

  it('O8 a Stripe-generated header for another secret is refused', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body.toString('utf8'), secret: previous, timestamp: nowSec() });
    expect(reasonOf(() => verify(body, header, secret))).toBe('no_matching_signature');
  });

  it('O9 during rotation two v1 values, active first; either secret verifies (ours and Stripe\'s)', () => {
    const timestamp = nowSec();
    const header = sign({ payload: body, secrets: [secret, previous], timestamp });
    const v1 = header.split(',').filter((p) => p.startsWith('v1='));
    expect(v1).toHaveLength(2);
    expect(v1[0]).toBe(sign({ payload: body, secrets: [secret], timestamp }).split(',')[1]);
    expect(verify(body, header, secret).timestamp).toBe(timestamp);
    expect(verify(body, header, previous).timestamp).toBe(timestamp);
    expect(stripe.webhooks.constructEvent(body, header, previous).id).toBe('evt_01test');
    expect(stripe.webhooks.constructEvent(body, header, secret).id).toBe('evt_01test');
  });

  it('O10 default tolerance is 300 s; the injected clock decides', () => {
    const header = sign({ payload: body, secrets: [secret], timestamp: 1_700_000_000 });
    expect(verify(body, header, secret, { now: new Date(1_700_000_300_000) }).timestamp).toBe(1_700_000_000);
    expect(verify(body, header, secret, { now: () => new Date(1_699_999_700_000) }).timestamp).toBe(1_700_000_000);
    expect(reasonOf(() => verify(body, header, secret, { now: 1_700_000_301_000 }))).toBe('timestamp_outside_tolerance');
    expect(verify(body, header, secret, { now: 1_700_000_400_000, toleranceSeconds: 600 }).timestamp).toBe(1_700_000_000);
  });

  const rejections: Array<[string, () => unknown, string]> = [
    ['stale timestamp (301 s old)', () => verify(body, sign({ payload: body, secrets: [secret], timestamp: nowSec() - 301 }), secret), 'timestamp_outside_tolerance'],
    ['future timestamp (301 s ahead)', () => verify(body, sign({ payload: body, secrets: [secret], timestamp: nowSec() + 301 }), secret), 'timestamp_outside_tolerance'],
    ['tampered body', () => verify(Buffer.concat([body, Buffer.from(' ')]), sign({ payload: body, secrets: [secret], timestamp: nowSec() }), secret), 'no_matching_signature'],
    ['re-serialized body', () => verify(JSON.stringify(JSON.parse(body.toString()), null, 2), sign({ payload: body, secrets: [secret], timestamp: nowSec() }), secret), 'no_matching_signature'],
    ['wrong secret', () => verify(body, sign({ payload: body, secrets: [previous], timestamp: nowSec() }), secret), 'no_matching_signature'],
    ['missing header', () => verify(body, undefined, secret), 'missing_header'],
    ['empty header', () => verify(body, '', secret), 'missing_header'],
    ['no t=', () => verify(body, `v1=${'a'.repeat(64)}`, secret), 'malformed_header'],
    ['no v1=', () => verify(body, `t=${nowSec()}`, secret), 'malformed_header'],
    ['t not a number', () => verify(body, `t=abc,v1=${'a'.repeat(64)}`, secret), 'malformed_header'],
    ['garbage', () => verify(body, 'hello world', secret), 'malformed_header'],
    ['v1 not hex', () => verify(body, `t=${nowSec()},v1=zz`, secret), 'malformed_header'],
  ];
  it.each(rejections)('O10 rejects %s', (_name, fn, reason) => {
    expect(reasonOf(fn)).toBe(reason);
  });

  it('O10 a header with an extra bogus v1 next to a good one still verifies', () => {
    const timestamp = nowSec();
    const good = sign({ payload: body, secrets: [secret], timestamp });
    expect(verify(body, `${good},v1=${'0'.repeat(64)},v0=ignored`, secret).timestamp).toBe(timestamp);
  });
});
