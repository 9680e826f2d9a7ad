// The provider registry: one adapter per provider of the profile's `inbound.providers`, by name.
import type { Profile } from '../config/profile.js';
import { createHmacAdapter } from './hmac.js';
import { createStripeAdapter } from './stripe.js';
import type { ProviderAdapter } from './types.js';

export type ProviderRegistry = ReadonlyMap<string, ProviderAdapter>;

export function createProviderRegistry(providers: Profile['inbound']['providers']): ProviderRegistry {
  const registry = new Map<string, ProviderAdapter>();
  for (const [name, config] of Object.entries(providers)) {
    registry.set(
      name,
      config.scheme === 'stripe'
        ? createStripeAdapter({ provider: name, secret: config.secret_ref, previousSecret: config.previous_secret_ref, toleranceSeconds: config.tolerance_seconds })
        : createHmacAdapter({ provider: name, secret: config.secret_ref, previousSecret: config.previous_secret_ref, header: config.header, encoding: config.encoding }),
    );
  }
  return registry;
}

export { PayloadError, SignatureError, type HeaderMap, type ProviderAdapter } from './types.js';
export { STRIPE_EVENT_TYPES, STRIPE_SIGNATURE_HEADER } from './stripe.js';
export { HMAC_EVENT_TYPES } from './hmac.js';
