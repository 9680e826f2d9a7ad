// The provider sandbox: the only stand-in for the payment providers, which are outside our system. It serves each
// provider's payments API (the contract in src/shared/inbound.ts), lets tests and demos create and change payments,
// and sends signed webhooks to our ingress; switches (in code or PUT /control/switches) inject latency, 5xx, a full
// API outage, amount mismatches, duplicate deliveries and out-of-order delivery, and one payment can be made to fail.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { z } from 'zod';
import type { ProviderPayment } from '../shared/inbound.js';
import { hmacPayload, objectIdOf, stripePayload, type SandboxEvent } from './payloads.js';
import { hmacSignature, stripeSignatureHeader } from './signing.js';
import {
  DEFAULT_SWITCHES,
  defaultProviders,
  eventSchema,
  paymentSchema,
  switchesSchema,
  type PaymentInput,
  type SandboxProviderConfig,
  type SandboxSwitches,
} from './provider-inputs.js';

export { DEFAULT_SWITCHES, sandboxProvidersFromProfile, type PaymentInput, type SandboxProviderConfig, type SandboxSwitches } from './provider-inputs.js';

export interface Delivery {
  status: number;
  body: string;
}
export interface WebhookResult {
  eventId: string;
  /** L1: the refund's, dispute's or reversal's id the webhook carried, if any. */
  objectId?: string;
  body: string;
  deliveries: Delivery[];
}

export interface ProviderSandbox {
  url: string;
  port: number;
  readonly switches: Readonly<SandboxSwitches>;
  setSwitches(change: Partial<SandboxSwitches>): SandboxSwitches;
  /** Back to DEFAULT_SWITCHES, and no payment failing (setPaymentFailing). */
  resetSwitches(): void;
  /** Creates or replaces a payment in the provider's books (by ingress provider name or API path). */
  upsertPayment(provider: string, reference: string, payment: PaymentInput): ProviderPayment;
  getPayment(provider: string, reference: string): ProviderPayment | undefined;
  /** Removes a payment: the payments API answers 404 for it again. True if there was one. */
  deletePayment(provider: string, reference: string): boolean;
  /** Per-reference 5xx: the payments API answers 503 for this reference only (payment or not) until turned off. */
  setPaymentFailing(provider: string, reference: string, failing?: boolean): void;
  /** Payments API queries for one reference so far, whatever was answered. */
  hits(provider: string, reference: string): number;
  /** Signs and POSTs one webhook to the ingress, 1 + `duplicates` times. Amount/currency default to the payment's. */
  sendWebhook(provider: string, event: Omit<SandboxEvent, 'amountMinor' | 'currency'> & Partial<SandboxEvent>): Promise<WebhookResult>;
  /** Several webhooks in order (newest first with `outOfOrder`); results come back in the order of `events`. */
  sendWebhooks(provider: string, events: (Omit<SandboxEvent, 'amountMinor' | 'currency'> & Partial<SandboxEvent>)[]): Promise<WebhookResult[]>;
  readonly stats: { apiRequests: number; apiErrors: number; webhooksSent: number };
  close(): Promise<void>;
}

export interface SandboxOptions {
  port?: number;
  host?: string;
  /** Base URL of our API: webhooks go to {ingressUrl}/webhooks/{provider}. Without it only the payments API is played. */
  ingressUrl?: string;
  /** Providers to play; by default sandbox-stripe (/stripe) and sandbox-hmac (/hmac) with these secrets by name. */
  providers?: SandboxProviderConfig[];
  secrets?: Record<string, string | string[]>;
  switches?: Partial<SandboxSwitches>;
  random?: () => number;
  now?: () => Date;
  fetch?: typeof fetch;
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startProviderSandbox(options: SandboxOptions): Promise<ProviderSandbox> {
  const providers = options.providers ?? defaultProviders(options.secrets);
  const byName = new Map(providers.map((p) => [p.name, p]));
  const byPath = new Map(providers.map((p) => [p.path, p]));
  const find = (key: string) => byName.get(key) ?? byPath.get(key);
  const books = new Map<string, Map<string, ProviderPayment>>(providers.map((p) => [p.name, new Map()]));
  let switches: SandboxSwitches = { ...DEFAULT_SWITCHES, ...options.switches };
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  const doFetch = options.fetch ?? fetch;
  const stats = { apiRequests: 0, apiErrors: 0, webhooksSent: 0 };
  // Per provider name: references answered 503, and payments API queries per reference.
  const failing = new Map<string, Set<string>>(providers.map((p) => [p.name, new Set()]));
  const hitCounts = new Map<string, Map<string, number>>(providers.map((p) => [p.name, new Map()]));
  const resetSwitches = () => {
    switches = { ...DEFAULT_SWITCHES };
    for (const references of failing.values()) references.clear();
  };

  const providerOf = (key: string) => {
    const provider = find(key);
    if (!provider) throw new Error(`the sandbox plays no provider ${key}`);
    return provider;
  };

  const upsertPayment = (key: string, reference: string, input: PaymentInput): ProviderPayment => {
    const provider = providerOf(key);
    const parsed = paymentSchema.parse(input);
    const payment: ProviderPayment = { reference, ...parsed };
    books.get(provider.name)!.set(reference, payment);
    return payment;
  };
  const setPaymentFailing = (key: string, reference: string, on = true) => {
    const references = failing.get(providerOf(key).name)!;
    if (on) references.add(reference);
    else references.delete(reference);
  };
  const deletePayment = (key: string, reference: string) => books.get(providerOf(key).name)!.delete(reference);

  async function deliver(provider: SandboxProviderConfig, body: string): Promise<Delivery> {
    if (!options.ingressUrl) throw new Error('this sandbox was started without an ingressUrl: it sends no webhooks');
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': `apipay-provider-sandbox/${provider.scheme}` };
    if (provider.scheme === 'stripe') {
      headers['stripe-signature'] = stripeSignatureHeader(body, provider.secret, Math.floor(now().getTime() / 1000));
    } else {
      const secret = Array.isArray(provider.secret) ? provider.secret[0]! : provider.secret;
      headers[(provider.header ?? 'X-Sandbox-Signature').toLowerCase()] = hmacSignature(body, secret, provider.encoding ?? 'base64');
    }
    stats.webhooksSent += 1;
    try {
      const response = await doFetch(`${options.ingressUrl.replace(/\/$/, '')}/webhooks/${provider.name}`, { method: 'POST', headers, body });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      return { status: 0, body: (error as Error).message };
    }
  }

  const sendWebhook: ProviderSandbox['sendWebhook'] = async (key, event) => {
    const provider = providerOf(key);
    const payment = books.get(provider.name)!.get(event.reference);
    const amountMinor = event.amountMinor ?? payment?.amountMinor;
    const currency = event.currency ?? payment?.currency;
    if (amountMinor === undefined || currency === undefined) {
      throw new Error(`sendWebhook: no amount/currency given and no payment ${event.reference} at ${provider.name}`);
    }
    const objectId = objectIdOf(event);
    const full: SandboxEvent = { ...event, amountMinor, currency, objectId: objectId ?? null };
    const { id, body } = provider.scheme === 'stripe' ? stripePayload(full) : hmacPayload(full);
    const deliveries: Delivery[] = [];
    for (let i = 0; i <= switches.duplicates; i += 1) deliveries.push(await deliver(provider, body));
    return { eventId: id, ...(objectId ? { objectId } : {}), body, deliveries };
  };

  const app = new Hono();
  app.onError((error, c) => c.json({ error: error instanceof z.ZodError ? z.prettifyError(error) : error.message }, error instanceof z.ZodError ? 400 : 500));
  app.get('/control/switches', (c) => c.json(switches));
  app.put('/control/switches', async (c) => {
    switches = { ...switches, ...switchesSchema.partial().parse(await c.req.json()) };
    return c.json(switches);
  });
  app.post('/control/reset', (c) => {
    resetSwitches();
    return c.json(switches);
  });
  app.get('/control/stats', (c) => c.json(stats));
  app.put('/control/failing/:provider/:reference', async (c) => {
    if (!find(c.req.param('provider'))) return c.json({ error: 'unknown provider' }, 404);
    const { failing: on } = z.strictObject({ failing: z.boolean() }).parse(await c.req.json());
    setPaymentFailing(c.req.param('provider'), c.req.param('reference'), on);
    return c.json({ reference: c.req.param('reference'), failing: on });
  });
  app.get('/control/hits/:provider/:reference', (c) => {
    const provider = find(c.req.param('provider'));
    if (!provider) return c.json({ error: 'unknown provider' }, 404);
    return c.json({ reference: c.req.param('reference'), hits: hitCounts.get(provider.name)!.get(c.req.param('reference')) ?? 0 });
  });

  app.get('/:provider/payments/:reference', async (c) => {
    const provider = find(c.req.param('provider'));
    if (!provider) return c.json({ error: 'unknown provider' }, 404);
    const reference = c.req.param('reference');
    const counts = hitCounts.get(provider.name)!;
    counts.set(reference, (counts.get(reference) ?? 0) + 1);
    stats.apiRequests += 1;
    if (switches.latencyMs > 0) await sleep(switches.latencyMs);
    const failed = switches.outage || failing.get(provider.name)!.has(reference) || (switches.errorRate > 0 && random() < switches.errorRate);
    if (failed) {
      stats.apiErrors += 1;
      return c.json({ error: switches.outage ? 'provider outage' : 'provider error' }, 503);
    }
    const payment = books.get(provider.name)!.get(reference);
    if (!payment) return c.json({ error: 'no such payment' }, 404);
    return c.json(switches.amountMismatch ? { ...payment, amountMinor: String(BigInt(payment.amountMinor) + 1n) } : payment);
  });
  app.put('/:provider/payments/:reference', async (c) => {
    if (!find(c.req.param('provider'))) return c.json({ error: 'unknown provider' }, 404);
    return c.json(upsertPayment(c.req.param('provider'), c.req.param('reference'), await c.req.json()));
  });
  app.delete('/:provider/payments/:reference', (c) => {
    if (!find(c.req.param('provider'))) return c.json({ error: 'unknown provider' }, 404);
    return c.json({ deleted: deletePayment(c.req.param('provider'), c.req.param('reference')) });
  });
  app.post('/:provider/webhooks', async (c) => {
    if (!find(c.req.param('provider'))) return c.json({ error: 'unknown provider' }, 404);
    return c.json(await sendWebhook(c.req.param('provider'), eventSchema.parse(await c.req.json())));
  });

  const server: ServerType = serve({ fetch: app.fetch, hostname: options.host ?? '127.0.0.1', port: options.port ?? 4100 });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    get switches() {
      return switches;
    },
    setSwitches(change) {
      switches = { ...switches, ...switchesSchema.partial().parse(change) };
      return switches;
    },
    resetSwitches,
    upsertPayment,
    getPayment: (key, reference) => books.get(providerOf(key).name)!.get(reference),
    deletePayment,
    setPaymentFailing,
    hits: (key, reference) => hitCounts.get(providerOf(key).name)!.get(reference) ?? 0,
    sendWebhook,
    async sendWebhooks(key, events) {
      const ordered = switches.outOfOrder ? [...events].reverse() : events;
      const results: WebhookResult[] = [];
      for (const event of ordered) results.push(await sendWebhook(key, event));
      return switches.outOfOrder ? results.reverse() : results;
    },
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
