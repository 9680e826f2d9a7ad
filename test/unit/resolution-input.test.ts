// R2 operator input checked where it enters, and L2 what an applied resolution posts (pure functions).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolutionAmount } from '../../src/inbound/resolution-amount.js';
import { resolutionInputProblem, textProblem } from '../../src/shared/operator-input.js';

describe('R2 operator text', () => {
  it.each([
    ['alice', null],
    ['  alice  ', null],
    ['', 'is required'],
    ['   ', 'is required'],
    ['checked\u0000', 'must not contain U+0000'],
    ['\uD800', 'must not contain a lone UTF-16 surrogate'],
    ['a\uDC00b', 'must not contain a lone UTF-16 surrogate'],
    ['😀 emoji is fine', null],
    ['x'.repeat(201), 'must be at most 200 characters'],
    ['😀'.repeat(200), null],
    [42, 'must be a string'],
  ])('R2 %j → %s', (value, problem) => expect(textProblem(value, 200)).toBe(problem));

  it('R2 whatever text passes is storable by PostgreSQL (valid UTF-8 without NUL)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (s) => {
        if (textProblem(s, 200) !== null) return;
        expect(s.includes('\u0000')).toBe(false);
        expect(Buffer.from(s, 'utf8').toString('utf8')).toBe(s); // no lone surrogate was replaced
      }),
      { seed: 8, numRuns: 2000 },
    );
  });

  it.each([
    [{ decision: 'applied', operator: 'a', reason: 'b' }, null],
    [{ decision: 'acknowledged', operator: 'a', reason: 'b' }, null],
    [{ decision: 'maybe', operator: 'a', reason: 'b' }, 'decision must be one of applied, rejected, acknowledged'],
    [{ decision: 'applied', operator: 'a', reason: 'b\u0000' }, 'reason must not contain U+0000'],
    [{ decision: 'rejected', operator: 'a', reason: 'b', post: 'webhook' }, 'post is only for an applied decision'],
    [{ decision: 'applied', operator: 'a', reason: 'b', post: { amountMinor: '0', currency: 'EUR' } }, 'post.amountMinor must be positive minor units (at most 18 digits)'],
    [{ decision: 'applied', operator: 'a', reason: 'b', post: { amountMinor: '1'.repeat(19), currency: 'EUR' } }, 'post.amountMinor must be positive minor units (at most 18 digits)'],
    [{ decision: 'applied', operator: 'a', reason: 'b', post: { amountMinor: '5', currency: 'eur' } }, 'post.currency must be an ISO 4217 code'],
    [{ decision: 'applied', operator: 'a', reason: 'b', post: 'both' }, 'post must be provider, webhook or { amountMinor, currency }'],
    [null, 'resolution must be an object'],
  ])('R2 resolution %j → %s', (resolution, problem) => expect(resolutionInputProblem(resolution)).toBe(problem));
});

describe('L2 resolution amounts', () => {
  const event = { amountMinor: '1500', currency: 'JPY' };
  const provider = { amountMinor: '1400', currency: 'USD', refunds: [{ id: 're_1', amountMinor: '300' }] };
  it.each([
    ['payment', provider, undefined, { ok: true, basis: 'provider', amountMinor: '1400', currency: 'USD' }],
    ['payment', provider, 'webhook', { ok: true, basis: 'webhook', amountMinor: '1500', currency: 'JPY' }],
    ['payment', provider, { amountMinor: '1450', currency: 'USD' }, { ok: true, basis: 'explicit', amountMinor: '1450', currency: 'USD' }],
    ['payment', null, 'provider', { ok: false, problem: 'the provider never answered: state post "webhook" or an explicit amount' }],
    ['refund', provider, 'provider', { ok: true, basis: 'provider', amountMinor: '300', currency: 'USD', providerObjectId: 're_1', matchedBy: 'operator' }],
    ['refund', { ...provider, refunds: [] }, 'provider', { ok: false, problem: 'the provider lists 0 refund items: state post "webhook" or an explicit amount' }],
    // L1: a chargeback is matched against the provider's disputes, not its refunds.
    ['chargeback', provider, 'provider', { ok: false, problem: 'the provider lists 0 dispute items: state post "webhook" or an explicit amount' }],
    ['chargeback', { ...provider, disputes: [{ id: 'dp_1', amountMinor: '700' }] }, 'provider', { ok: true, basis: 'provider', amountMinor: '700', currency: 'USD', providerObjectId: 'dp_1', matchedBy: 'operator' }],
  ] as const)('L2 %s with provider %j and post %j', (kind, p, post, expected) => {
    expect(resolutionAmount(kind, event, p as never, post as never)).toEqual(expected);
  });
  it('L1 an event naming its provider object takes that object, by any basis; an unlisted one has no provider amount', () => {
    const two = { ...provider, refunds: [{ id: 're_1', amountMinor: '300' }, { id: 're_2', amountMinor: '900' }] };
    expect(resolutionAmount('refund', { ...event, providerObjectId: 're_2' }, two, 'provider')).toEqual({ ok: true, basis: 'provider', amountMinor: '900', currency: 'USD', providerObjectId: 're_2', matchedBy: 'id' });
    expect(resolutionAmount('refund', { ...event, providerObjectId: 're_2' }, two, 'webhook')).toEqual({ ok: true, basis: 'webhook', amountMinor: '1500', currency: 'JPY', providerObjectId: 're_2', matchedBy: 'id' });
    expect(resolutionAmount('refund', { ...event, providerObjectId: 're_9' }, two, 'provider')).toEqual({ ok: false, problem: 'the provider lists no refund re_9: state post "webhook" or an explicit amount' });
    expect(resolutionAmount('refund', { ...event, providerObjectId: 're_9' }, two, 'webhook')).toEqual({ ok: true, basis: 'webhook', amountMinor: '1500', currency: 'JPY' });
  });
});
