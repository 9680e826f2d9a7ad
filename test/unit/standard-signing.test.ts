// O16/O17: signStandard against the npm `standardwebhooks` verifier both ways, v1a with ed25519 keys, and our
// `verify` taking the request's headers in either scheme; fast-check over ids, bodies and timestamps.
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateSigningKeyPair,
  publicKeyOf,
  sign,
  signStandard,
  verify,
  WebhookVerificationError,
} from '../../src/signing/index.js';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const previous = 'whsec_cHJldmlvdXMtc2VjcmV0LTAxMjM0NTY3ODlhYmNkZWY=';
const body = Buffer.from('{"id":"evt_01std","type":"payment.succeeded","data":{"object":{"amount":1250,"note":"café"}}}');
const now = () => Math.floor(Date.now() / 1000);

describe('Standard Webhooks signing (O16, O17)', () => {
  it('O16 matches the npm reference library byte for byte and is verified by it', () => {
    const ts = now();
    const headers = signStandard({ id: 'evt_01std', timestamp: ts, payload: body, secrets: [secret] });
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('evt_01std', new Date(ts * 1000), body.toString()));
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ id: 'evt_01std' });
    expect(verify(body, headers, secret)).toEqual({ timestamp: ts, id: 'evt_01std' });
  });

  it('O16 any id, timestamp and body the library signs, we verify (and the other way round)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/), fc.string({ maxLength: 200 }), (id, text) => {
        const ts = now();
        const payload = Buffer.from(text, 'utf8');
        const ours = signStandard({ id, timestamp: ts, payload, secrets: [secret] });
        expect(() => new Webhook(secret).verify(payload, ours, { jsonParse: false })).not.toThrow();
        const theirs = {
          'webhook-id': id,
          'webhook-timestamp': String(ts),
          'webhook-signature': new Webhook(secret).sign(id, new Date(ts * 1000), payload.toString()),
        };
        expect(verify(payload, theirs, secret).id).toBe(id);
      }),
      { numRuns: 100 },
    );
  });

  it('O9 during a rotation both secrets sign; the library verifies with either', () => {
    const headers = signStandard({ id: 'evt_01std', timestamp: now(), payload: body, secrets: [secret, previous] });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const s of [secret, previous]) expect(() => new Webhook(s).verify(body, headers)).not.toThrow();
    expect(() => new Webhook('whsec_b3RoZXItc2VjcmV0').verify(body, headers)).toThrow(/No matching signature/);
  });

  it('O17 v1a: ed25519 over the same content; whpk_ verifies, another key or a changed body does not', () => {
    const pair = generateSigningKeyPair();
    const other = generateSigningKeyPair();
    expect(publicKeyOf(pair.signingKey)).toBe(pair.publicKey);
    const headers = signStandard({
      id: 'evt_01std',
      timestamp: now(),
      payload: body,
      secrets: [],
      signingKeys: [pair.signingKey],
    });
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(verify(body, headers, pair.publicKey).id).toBe('evt_01std');
    expect(() => verify(body, headers, other.publicKey)).toThrow(WebhookVerificationError);
    expect(() => verify(Buffer.from(`${body} `), headers, pair.publicKey)).toThrow(/no webhook-signature entry matches/);
    // The npm library checks v1 only: a v1a-only header has nothing it can verify.
    expect(() => new Webhook(secret).verify(body, headers)).toThrow(/No matching signature/);
  });

  it('O16 rejects a stale or future timestamp and missing headers with a reason', () => {
    const stale = signStandard({ id: 'evt_1', timestamp: now() - 301, payload: body, secrets: [secret] });
    expect(() => verify(body, stale, secret)).toThrow(expect.objectContaining({ reason: 'timestamp_outside_tolerance' }));
    const future = signStandard({ id: 'evt_1', timestamp: now() + 301, payload: body, secrets: [secret] });
    expect(() => verify(body, future, secret)).toThrow(expect.objectContaining({ reason: 'timestamp_outside_tolerance' }));
    expect(() => verify(body, { 'webhook-signature': 'v1,abc' }, secret)).toThrow(
      expect.objectContaining({ reason: 'missing_header' }),
    );
  });

  it('O10 our verify still takes an ApiPay-Signature, as a string or among the headers', () => {
    const ts = now();
    const header = sign({ payload: body, secrets: [secret], timestamp: ts });
    expect(verify(body, header, secret)).toEqual({ timestamp: ts });
    expect(verify(body, { 'ApiPay-Signature': header }, secret)).toEqual({ timestamp: ts });
    expect(verify(body, new Headers({ 'apipay-signature': header }), secret)).toEqual({ timestamp: ts });
  });
});
