// `npm run sandbox [-- --demo]`: the provider sandbox as a process, playing the providers of the profile
// (APIPAY_PROFILE) on SANDBOX_PORT (default: the port of their api_base_url, 4100) and posting webhooks to
// INGRESS_URL (default http://API_HOST:API_PORT). With --demo it also creates payments and sends a webhook every
// SANDBOX_DEMO_INTERVAL ms, cycling through outcomes an operator should see: applied, rejected, manual review
// (amount mismatch, unknown outcome past the timeout), duplicates and a refund.
import { randomUUID } from 'node:crypto';
import { loadProfile } from '../config/profile.js';
import { createLogger } from '../lib/logger.js';
import { onShutdown } from '../lib/shutdown.js';
import { sandboxProvidersFromProfile, startProviderSandbox, type ProviderSandbox } from './provider.js';

const logger = createLogger('provider-sandbox');
const profile = loadProfile();
const providers = sandboxProvidersFromProfile(profile);
const firstApi = new URL(Object.values(profile.inbound.providers)[0]?.api_base_url ?? 'http://127.0.0.1:4100');
const port = Number(process.env.SANDBOX_PORT ?? (firstApi.port || 4100));
const ingressUrl = process.env.INGRESS_URL ?? `http://${process.env.API_HOST ?? '127.0.0.1'}:${process.env.API_PORT ?? 3000}`;

const sandbox = await startProviderSandbox({ port, host: firstApi.hostname, ingressUrl, providers });
logger.info({ url: sandbox.url, ingressUrl, providers: providers.map((p) => `${p.name} → ${sandbox.url}/${p.path}`) }, 'provider sandbox listening');

type Scenario = (sandbox: ProviderSandbox, provider: string) => Promise<string>;
const ref = () => `pay_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
const amount = () => 500 + Math.floor(Math.random() * 9_500);

const SCENARIOS: Record<string, Scenario> = {
  'confirmed → applied': async (s, p) => {
    const reference = ref();
    const a = amount();
    s.upsertPayment(p, reference, { status: 'succeeded', amountMinor: a, currency: 'EUR' });
    await s.sendWebhook(p, { type: 'payment.succeeded', reference });
    return reference;
  },
  'declined → rejected': async (s, p) => {
    const reference = ref();
    s.upsertPayment(p, reference, { status: 'failed', amountMinor: amount(), currency: 'EUR' });
    await s.sendWebhook(p, { type: 'payment.failed', reference });
    return reference;
  },
  'amount mismatch → manual_review': async (s, p) => {
    const reference = ref();
    const a = amount();
    s.upsertPayment(p, reference, { status: 'succeeded', amountMinor: a, currency: 'EUR' });
    await s.sendWebhook(p, { type: 'payment.succeeded', reference, amountMinor: a + 100 });
    return reference;
  },
  'pending past the timeout → manual_review': async (s, p) => {
    const reference = ref();
    s.upsertPayment(p, reference, { status: 'pending', amountMinor: amount(), currency: 'EUR' });
    await s.sendWebhook(p, { type: 'payment.succeeded', reference });
    return reference;
  },
  'delivered three times → applied once': async (s, p) => {
    const reference = ref();
    s.upsertPayment(p, reference, { status: 'succeeded', amountMinor: amount(), currency: 'EUR' });
    s.setSwitches({ duplicates: 2 });
    try {
      await s.sendWebhook(p, { type: 'payment.succeeded', reference });
    } finally {
      s.setSwitches({ duplicates: 0 });
    }
    return reference;
  },
  'captured, then refunded': async (s, p) => {
    const reference = ref();
    const a = amount();
    s.upsertPayment(p, reference, { status: 'succeeded', amountMinor: a, currency: 'EUR' });
    await s.sendWebhook(p, { type: 'payment.succeeded', reference });
    const refund = Math.floor(a / 2);
    s.upsertPayment(p, reference, { status: 'refunded', amountMinor: a, currency: 'EUR', refunds: [{ id: `re_${reference}`, amountMinor: refund }] });
    await s.sendWebhook(p, { type: 'refund.succeeded', reference, amountMinor: refund });
    return reference;
  },
};

let demo: NodeJS.Timeout | undefined;
if (process.argv.includes('--demo')) {
  const names = Object.keys(SCENARIOS);
  const interval = Number(process.env.SANDBOX_DEMO_INTERVAL ?? 4_000);
  let turn = 0;
  demo = setInterval(() => {
    const name = names[turn % names.length]!;
    const provider = providers[Math.floor(turn / names.length) % providers.length]!.name;
    turn += 1;
    SCENARIOS[name]!(sandbox, provider).then(
      (reference) => logger.info({ scenario: name, provider, reference }, 'demo webhook sent'),
      (error) => logger.warn({ err: error, scenario: name }, 'demo scenario failed'),
    );
  }, interval);
}

onShutdown(logger, [() => clearInterval(demo), () => sandbox.close()]);
