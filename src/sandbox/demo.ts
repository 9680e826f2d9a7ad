// Demo traffic through the provider sandbox: payments and their webhooks cycling through the outcomes an operator
// should see in the Temporal UI (applied, rejected, manual review by mismatch and by timeout, duplicates, refunds).
// Drives a sandbox in this process or a running one over its HTTP control API (`httpSandboxDriver`).
import { randomUUID } from 'node:crypto';
import type { Logger } from '../lib/logger.js';
import type { PaymentInput, ProviderSandbox, WebhookResult } from './provider.js';
import type { SandboxEvent } from './payloads.js';

type EventInput = Omit<SandboxEvent, 'amountMinor' | 'currency'> & Partial<SandboxEvent>;

export interface SandboxDriver {
  upsertPayment(provider: string, reference: string, payment: PaymentInput): Promise<unknown>;
  sendWebhook(provider: string, event: EventInput): Promise<WebhookResult>;
}

export const inProcessDriver = (sandbox: ProviderSandbox): SandboxDriver => ({
  upsertPayment: async (provider, reference, payment) => sandbox.upsertPayment(provider, reference, payment),
  sendWebhook: (provider, event) => sandbox.sendWebhook(provider, event),
});

/** A sandbox started elsewhere (`npm run sandbox`): PUT /{provider}/payments/{ref}, POST /{provider}/webhooks. */
export function httpSandboxDriver(url: string, doFetch: typeof fetch = fetch): SandboxDriver {
  const call = async (method: string, path: string, body: unknown) => {
    const response = await doFetch(`${url.replace(/\/$/, '')}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`sandbox ${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  return {
    upsertPayment: (provider, reference, payment) => call('PUT', `/${provider}/payments/${encodeURIComponent(reference)}`, payment),
    sendWebhook: (provider, event) =>
      call('POST', `/${provider}/webhooks`, { ...event, effectiveAt: event.effectiveAt?.toISOString() }) as Promise<WebhookResult>,
  };
}

type Scenario = (driver: SandboxDriver, provider: string) => Promise<string>;
const ref = () => `pay_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const amount = () => 500 + Math.floor(Math.random() * 9_500);

export const DEMO_SCENARIOS: Record<string, Scenario> = {
  'confirmed → applied': async (d, p) => {
    const reference = ref();
    await d.upsertPayment(p, reference, { status: 'succeeded', amountMinor: amount(), currency: 'EUR' });
    await d.sendWebhook(p, { type: 'payment.succeeded', reference });
    return reference;
  },
  'declined → rejected': async (d, p) => {
    const reference = ref();
    await d.upsertPayment(p, reference, { status: 'failed', amountMinor: amount(), currency: 'EUR' });
    await d.sendWebhook(p, { type: 'payment.failed', reference });
    return reference;
  },
  'amount mismatch → manual_review': async (d, p) => {
    const reference = ref();
    const a = amount();
    await d.upsertPayment(p, reference, { status: 'succeeded', amountMinor: a, currency: 'EUR' });
    await d.sendWebhook(p, { type: 'payment.succeeded', reference, amountMinor: a + 100 });
    return reference;
  },
  'pending past the timeout → manual_review': async (d, p) => {
    const reference = ref();
    await d.upsertPayment(p, reference, { status: 'pending', amountMinor: amount(), currency: 'EUR' });
    await d.sendWebhook(p, { type: 'payment.succeeded', reference });
    return reference;
  },
  'delivered three times → applied once': async (d, p) => {
    const reference = ref();
    await d.upsertPayment(p, reference, { status: 'succeeded', amountMinor: amount(), currency: 'EUR' });
    const first = await d.sendWebhook(p, { type: 'payment.succeeded', reference });
    for (let i = 0; i < 2; i += 1) await d.sendWebhook(p, { id: first.eventId, type: 'payment.succeeded', reference });
    return reference;
  },
  'captured, then refunded': async (d, p) => {
    const reference = ref();
    const a = amount();
    await d.upsertPayment(p, reference, { status: 'succeeded', amountMinor: a, currency: 'EUR' });
    await d.sendWebhook(p, { type: 'payment.succeeded', reference });
    const refund = Math.floor(a / 2);
    await d.upsertPayment(p, reference, { status: 'refunded', amountMinor: a, currency: 'EUR', refunds: [{ id: `re_${reference}`, amountMinor: refund }] });
    await d.sendWebhook(p, { type: 'refund.succeeded', reference, amountMinor: refund, objectId: `re_${reference}` });
    return reference;
  },
};

/** One scenario every `intervalMs`, cycling scenarios and then providers; returns stop(). */
export function runInboundDemo(options: { driver: SandboxDriver; providers: string[]; intervalMs: number; logger: Logger }): { stop: () => void } {
  const names = Object.keys(DEMO_SCENARIOS);
  let turn = 0;
  const timer = setInterval(() => {
    const name = names[turn % names.length]!;
    const provider = options.providers[Math.floor(turn / names.length) % options.providers.length]!;
    turn += 1;
    DEMO_SCENARIOS[name]!(options.driver, provider).then(
      (reference) => options.logger.info({ scenario: name, provider, reference }, 'demo webhook sent'),
      (error) => options.logger.warn({ err: error, scenario: name, provider }, 'demo scenario failed'),
    );
  }, options.intervalMs);
  return { stop: () => clearInterval(timer) };
}
