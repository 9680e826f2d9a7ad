// A8: while a provider rotates its signing secret both secrets are accepted, for both schemes (profile
// `previous_secret_ref`); without it, or with any third secret, the signature is refused.
import { describe, expect, it } from 'vitest';
import { createProviderRegistry } from '../../src/providers/index.js';
import { SignatureError } from '../../src/providers/types.js';
import { hmacPayload, stripePayload } from '../../src/sandbox/payloads.js';
import { hmacSignature, stripeSignatureHeader } from '../../src/sandbox/signing.js';
import { testProfile } from '../helpers/profile.js';

const NOW = new Date('2026-12-01T09:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const event = { type: 'payment.succeeded' as const, reference: 'pi_rot', amountMinor: 100, currency: 'eur', effectiveAt: NOW };

function registry(withPrevious: boolean) {
  process.env.ROT_NEW_SECRET = 'whsec_rotation_new_0123456789';
  process.env.ROT_OLD_SECRET = 'whsec_rotation_old_0123456789';
  const previous = withPrevious ? { previous_secret_ref: 'env:ROT_OLD_SECRET' } : {};
  const profile = testProfile({
    inbound: {
      providers: {
        'rot-stripe': { scheme: 'stripe', secret_ref: 'env:ROT_NEW_SECRET', api_base_url: 'http://127.0.0.1:1/s', ...previous },
        'rot-hmac': { scheme: 'hmac', secret_ref: 'env:ROT_NEW_SECRET', header: 'X-Sig', encoding: 'hex', api_base_url: 'http://127.0.0.1:1/h', ...previous },
      },
    },
  });
  return createProviderRegistry(profile.inbound.providers);
}

const outcome = (fn: () => void) => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return error instanceof SignatureError ? error.reason : String(error);
  }
};

describe('A8 provider secret rotation', () => {
  const stripeBody = Buffer.from(stripePayload({ ...event, id: 'evt_rot' }).body);
  const hmacBody = Buffer.from(hmacPayload({ ...event, id: 'hev_rot' }).body);
  const stripeWith = (secret: string) => ({ 'stripe-signature': stripeSignatureHeader(stripeBody, secret, T) });
  const hmacWith = (secret: string) => ({ 'x-sig': hmacSignature(hmacBody, secret, 'hex') });

  it.each([
    ['new', 'whsec_rotation_new_0123456789', true, 'accepted'],
    ['old, during the rotation', 'whsec_rotation_old_0123456789', true, 'accepted'],
    ['old, after the rotation', 'whsec_rotation_old_0123456789', false, 'signature_mismatch'],
    ['unrelated', 'whsec_someone_else_0123456789', true, 'signature_mismatch'],
  ])('A8 a signature with the %s secret: %s', (_name, secret, withPrevious, expected) => {
    const providers = registry(withPrevious as boolean);
    expect(outcome(() => providers.get('rot-stripe')!.verify(stripeBody, stripeWith(secret as string), NOW))).toBe(expected);
    expect(outcome(() => providers.get('rot-hmac')!.verify(hmacBody, hmacWith(secret as string), NOW))).toBe(expected);
  });
});
