// What the provider sandbox is told: the providers it plays (from a profile or the defaults) and the schemas of
// its switches, payments and webhook events, as its control API and callers give them (src/sandbox/provider.ts).
import { z } from 'zod';
import type { Profile } from '../config/profile.js';
import { schemeOptions } from '../providers/index.js';

export interface SandboxProviderConfig {
  /** The provider's name at our ingress: POST {ingressUrl}/webhooks/{name}. */
  name: string;
  /** Where its payments API is mounted: {url}/{path}/payments/{reference}. */
  path: string;
  scheme: 'stripe' | 'hmac';
  /** Several secrets (stripe): every webhook carries one v1 per secret, as during a provider's rotation. */
  secret: string | string[];
  header?: string;
  encoding?: 'hex' | 'base64';
}

export const switchesSchema = z.strictObject({
  /** Added before every payments API answer. */
  latencyMs: z.number().int().min(0).max(60_000),
  /** Share (0..1) of payments API requests answered 503. */
  errorRate: z.number().min(0).max(1),
  /** Every payments API request answered 503; webhooks are still sent (the drill's "API down at peak"). */
  outage: z.boolean(),
  /** The payments API reports the amount plus one minor unit, so it disagrees with the webhook. */
  amountMismatch: z.boolean(),
  /** Extra deliveries of every webhook (providers deliver at least once). */
  duplicates: z.number().int().min(0).max(10),
  /** sendWebhooks delivers its batch newest first. */
  outOfOrder: z.boolean(),
});
export type SandboxSwitches = z.output<typeof switchesSchema>;
export const DEFAULT_SWITCHES: SandboxSwitches = {
  latencyMs: 0,
  errorRate: 0,
  outage: false,
  amountMismatch: false,
  duplicates: 0,
  outOfOrder: false,
};

const itemsSchema = z
  .array(
    z.strictObject({
      id: z.string().min(1),
      amountMinor: z.union([z.string().regex(/^\d+$/), z.number().int().min(0)]).transform(String),
    }),
  )
  .optional();

export const paymentSchema = z.strictObject({
  status: z.enum(['succeeded', 'failed', 'pending', 'refunded', 'disputed']),
  amountMinor: z.union([z.string().regex(/^\d+$/), z.number().int().min(0)]).transform(String),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3}$/)
    .transform((c) => c.toUpperCase()),
  // L1: each object that gives money back, with the provider's own id (the payments API answers them).
  refunds: itemsSchema,
  disputes: itemsSchema,
  reversals: itemsSchema,
});
export type PaymentInput = z.input<typeof paymentSchema>;

export const eventSchema = z.strictObject({
  id: z.string().min(1).optional(),
  type: z.enum([
    'payment.succeeded',
    'payment.failed',
    'payment.pending',
    'refund.succeeded',
    'chargeback.created',
    'payment.reversed',
  ]),
  reference: z.string().min(1),
  amountMinor: z.union([z.string().regex(/^\d+$/), z.number().int().min(0)]).optional(),
  currency: z.string().optional(),
  effectiveAt: z.iso
    .datetime()
    .transform((s) => new Date(s))
    .optional(),
  objectId: z.string().min(1).nullable().optional(),
});

/**
 * The providers of a profile the sandbox plays (schemes stripe and hmac; Stripe itself, stripe_api, is played by
 * stripe-mock): the API path is the last segment of api_base_url.
 */
export function sandboxProvidersFromProfile(profile: Profile): SandboxProviderConfig[] {
  return Object.entries(profile.inbound.providers).flatMap(([name, p]): SandboxProviderConfig[] => {
    if (p.scheme !== 'stripe' && p.scheme !== 'hmac') return [];
    const path = new URL(p.api_base_url).pathname.split('/').filter(Boolean).pop() ?? name;
    const hmac =
      p.scheme === 'hmac' ? (schemeOptions(name, p).options as Pick<SandboxProviderConfig, 'header' | 'encoding'>) : {};
    return [{ name, path, scheme: p.scheme, secret: p.secret_ref, ...hmac }];
  });
}

export function defaultProviders(secrets: Record<string, string | string[]> = {}): SandboxProviderConfig[] {
  const secret = (name: string) => {
    const value = secrets[name];
    if (!value) throw new Error(`startProviderSandbox: no secret for ${name} (pass secrets or providers)`);
    return value;
  };
  return [
    { name: 'sandbox-stripe', path: 'stripe', scheme: 'stripe', secret: secret('sandbox-stripe') },
    {
      name: 'sandbox-hmac',
      path: 'hmac',
      scheme: 'hmac',
      secret: secret('sandbox-hmac'),
      header: 'X-Sandbox-Signature',
      encoding: 'base64',
    },
  ];
}
