// Inbound reconciliation test helpers: the provider sandbox playing sandbox-stripe's payments API, steered per
// payment, unique provider events, and starting a reconciliation workflow the way the ingress does.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { Profile } from '../../src/config/profile.js';
import type { Db } from '../../src/db/client.js';
import { ledgerEntries, ledgerTransactions } from '../../src/db/schema/index.js';
import { buildReconciliationStart } from '../../src/inbound/start.js';
import { startProviderSandbox, type ProviderSandbox } from '../../src/sandbox/provider.js';
import { RECONCILIATION_WORKFLOW, type NormalizedProviderEvent, type ProviderPayment, type ReconciliationRules, type ReconciliationWorkflowInput } from '../../src/shared/inbound.js';
import { TEST_PROVIDER_SECRETS } from './profile.js';

export type ProviderAnswer = ProviderPayment | 'error' | null;

const PEER_PROVIDER = 'sandbox-stripe';

/**
 * The provider sandbox (no ingress) with sandbox-stripe at {baseUrl}: set(reference, payment) makes the payments API
 * answer it, 'error' answers 503 (setPaymentFailing), null 404 (no payment); hits counts the queries per reference.
 */
export async function startPaymentsPeer(): Promise<{
  sandbox: ProviderSandbox;
  baseUrl: string;
  set: (reference: string, answer: ProviderAnswer) => void;
  hits: (reference: string) => number;
  close: () => Promise<void>;
}> {
  const sandbox = await startProviderSandbox({
    port: 0,
    providers: [{ name: PEER_PROVIDER, path: 'stripe', scheme: 'stripe', secret: TEST_PROVIDER_SECRETS.SANDBOX_STRIPE_WEBHOOK_SECRET }],
  });
  return {
    sandbox,
    baseUrl: `${sandbox.url}/stripe`,
    set(reference, answer) {
      sandbox.setPaymentFailing(PEER_PROVIDER, reference, answer === 'error');
      if (answer === null) sandbox.deletePayment(PEER_PROVIDER, reference);
      else if (answer !== 'error') {
        const { reference: _, ...payment } = answer;
        sandbox.upsertPayment(PEER_PROVIDER, reference, payment);
      }
    },
    hits: (reference) => sandbox.hits(PEER_PROVIDER, reference),
    close: () => sandbox.close(),
  };
}

export const uniqueRef = (label: string) => `pay_${label}_${randomUUID().slice(0, 12)}`;

export function providerEvent(overrides: Partial<NormalizedProviderEvent> = {}): NormalizedProviderEvent {
  return {
    providerEventId: `evt_${randomUUID()}`,
    type: 'payment.succeeded',
    paymentReference: uniqueRef('p'),
    amountMinor: '1000',
    currency: 'EUR',
    effectiveAt: new Date().toISOString(),
    ...overrides,
  };
}

export const succeeded = (event: NormalizedProviderEvent, patch: Partial<ProviderPayment> = {}): ProviderPayment => ({
  reference: event.paymentReference,
  status: 'succeeded',
  amountMinor: event.amountMinor,
  currency: event.currency,
  ...patch,
});

export async function startReconciliation(
  client: Client,
  profile: Profile,
  taskQueue: string,
  event: NormalizedProviderEvent,
  options: { provider?: string; rules?: ReconciliationRules; acknowledgedAt?: string; inputPatch?: Partial<ReconciliationWorkflowInput> } = {},
) {
  const start = buildReconciliationStart(
    profile,
    { provider: options.provider ?? 'sandbox-stripe', receiptId: 0, event, acknowledgedAt: options.acknowledgedAt ?? new Date().toISOString() },
    taskQueue,
    options.rules,
  );
  if (options.inputPatch) start.args = [{ ...start.args[0], ...options.inputPatch }];
  return client.workflow.start(RECONCILIATION_WORKFLOW, start);
}

export async function ledgerRowsFor(db: Db, paymentReference: string) {
  const txns = await db.select().from(ledgerTransactions).where(eq(ledgerTransactions.paymentReference, paymentReference)).orderBy(ledgerTransactions.postedAt);
  return txns;
}

export async function entriesOf(db: Db, account: string, currency = 'EUR') {
  return db.select().from(ledgerEntries).where(and(eq(ledgerEntries.account, account), eq(ledgerEntries.currency, currency)));
}

export { waitFor } from './wait.js';
