// The provider registry (I1, I15): one adapter per provider of the profile's `inbound.providers`, by name, built by
// the scheme its entry names. A scheme is one file (its profile keys and its adapter) and one line in SCHEMES.
import { ProfileError, type Profile, type ProviderConfig } from '../config/profile.js';
import { hmacScheme } from './hmac.js';
import { stripeApiScheme } from './stripe-api.js';
import { stripeScheme } from './stripe.js';
import type { ProviderAdapter, ProviderScheme } from './types.js';

export type ProviderRegistry = ReadonlyMap<string, ProviderAdapter>;

/** Every scheme a profile entry may name. */
export const SCHEMES: readonly ProviderScheme[] = [stripeScheme, hmacScheme, stripeApiScheme];

/** The keys every entry has (src/config/profile.ts); the rest belong to the scheme. */
const COMMON_KEYS = new Set(['scheme', 'secret_ref', 'previous_secret_ref', 'rate_limit', 'api_base_url', 'tolerance_seconds', 'merchant_account', 'livemode']);

/** The scheme's own keys of one entry, validated by the scheme; a ProfileError names the bad key by its path. */
export function schemeOptions(name: string, config: ProviderConfig, schemes: readonly ProviderScheme[] = SCHEMES): { scheme: ProviderScheme; options: unknown } {
  const path = `inbound.providers.${name}`;
  const scheme = schemes.find((s) => s.scheme === config.scheme);
  if (!scheme) throw new ProfileError(`invalid profile:\n  ${path}.scheme: unknown scheme "${config.scheme}" (known: ${schemes.map((s) => s.scheme).join(', ')})`);
  const own = Object.fromEntries(Object.entries(config).filter(([key]) => !COMMON_KEYS.has(key)));
  const result = scheme.options.safeParse(own);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
      return `  ${[path, ...issue.path, ...keys.slice(0, 1)].join('.')}: ${issue.message}`;
    });
    throw new ProfileError(`invalid profile:\n${lines.join('\n')}`);
  }
  return { scheme, options: result.data };
}

/** One provider's adapter from its profile entry (the payments query reads the entry's api_base_url as it is now). */
export function createProviderAdapter(name: string, config: ProviderConfig, schemes: readonly ProviderScheme[] = SCHEMES): ProviderAdapter {
  const { scheme, options } = schemeOptions(name, config, schemes);
  return scheme.create(
    { provider: name, secret: config.secret_ref, previousSecret: config.previous_secret_ref, toleranceSeconds: config.tolerance_seconds, apiBaseUrl: config.api_base_url },
    options,
  );
}

export function createProviderRegistry(providers: Profile['inbound']['providers'], schemes: readonly ProviderScheme[] = SCHEMES): ProviderRegistry {
  const registry = new Map<string, ProviderAdapter>();
  for (const [name, config] of Object.entries(providers)) registry.set(name, createProviderAdapter(name, config, schemes));
  return registry;
}

export { PayloadError, ProviderApiError, SignatureError, type HeaderMap, type PaymentQueryOptions, type ProviderAdapter, type ProviderScheme } from './types.js';
export { STRIPE_EVENT_TYPES, STRIPE_SIGNATURE_HEADER } from './stripe.js';
export { HMAC_EVENT_TYPES } from './hmac.js';
