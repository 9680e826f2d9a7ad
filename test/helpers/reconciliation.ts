// Inbound reconciliation test helpers: the provider sandbox playing sandbox-stripe's payments API, steered per
// payment, unique provider events, and starting a reconciliation workflow the way the ingress does: R20, the
// receipt (registry row and raw bytes in the provider's own format) first, then the start with the receipt's event.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { Profile } from '../../src/config/profile.js';
import { createDatabase, type Database, type Db } from '../../src/db/client.js';
import { ledgerEntries, ledgerTransactions, providerEventRegistry, webhookReceipts } from '../../src/db/schema/index.js';
import { buildReconciliationStart } from '../../src/inbound/start.js';
import { createProviderRegistry, PayloadError } from '../../src/providers/index.js';
import { hmacPayload, stripePayload } from '../../src/sandbox/payloads.js';
import { startProviderSandbox, type ProviderSandbox } from '../../src/sandbox/provider.js';
import { RECONCILIATION_WORKFLOW, type NormalizedProviderEvent, type ProviderPayment, type ReconciliationWorkflowInput } from '../../src/shared/inbound.js';
import { TEST_DATABASE_URL } from './env.js';
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
    // Whole seconds: a Stripe-style body carries `created` in seconds, and the receipt's event is what the run sees.
    effectiveAt: new Date(Math.floor(Date.now() / 1000) * 1000).toISOString(),
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

let receiptsPool: Database | undefined;
/** A small pool of the test database for receipts (closed with the test process). */
const receiptsDb = (): Db => (receiptsPool ??= createDatabase(TEST_DATABASE_URL, { max: 2 })).db;

/**
 * R20: writes the receipt the ingress would have written for `event` (the registry row and the raw body in the
 * provider's format of `profile`), and answers its id and the event as the provider's adapter reads it back. A
 * provider the profile does not name, or an event its adapter refuses, gets no receipt (the run refuses to start).
 */
export async function writeReceipt(
  db: Db,
  profile: Profile,
  provider: string,
  event: NormalizedProviderEvent,
): Promise<{ receiptId: number; event: NormalizedProviderEvent }> {
  const config = Object.hasOwn(profile.inbound.providers, provider) ? profile.inbound.providers[provider] : undefined;
  if (!config) return { receiptId: 0, event };
  const sandbox = {
    id: event.providerEventId,
    type: event.type,
    reference: event.paymentReference,
    amountMinor: event.amountMinor,
    currency: event.currency,
    effectiveAt: new Date(event.effectiveAt),
    objectId: event.providerObjectId ?? null,
  };
  const { body } = config.scheme === 'stripe' ? stripePayload(sandbox) : hmacPayload(sandbox);
  const rawBody = Buffer.from(body);
  let extracted: NormalizedProviderEvent;
  try {
    extracted = createProviderRegistry({ [provider]: config }).get(provider)!.extract(rawBody);
  } catch (error) {
    // What the adapter refuses the ingress never stores: such an event can only be started by hand, with no receipt.
    if (error instanceof PayloadError) return { receiptId: 0, event };
    throw error;
  }
  await db.insert(providerEventRegistry).values({ provider, providerEventId: event.providerEventId }).onConflictDoNothing();
  const [row] = await db
    .insert(webhookReceipts)
    .values({ provider, providerEventId: event.providerEventId, rawBody, headers: {}, workflowStartedAt: new Date() })
    .onConflictDoNothing()
    .returning({ id: webhookReceipts.id });
  const receiptId =
    row?.id ??
    (await db.select({ id: webhookReceipts.id }).from(webhookReceipts).where(and(eq(webhookReceipts.provider, provider), eq(webhookReceipts.providerEventId, event.providerEventId))))[0]!.id;
  return { receiptId, event: extracted };
}

export async function startReconciliation(
  client: Client,
  profile: Profile,
  taskQueue: string,
  event: NormalizedProviderEvent,
  options: { provider?: string; acknowledgedAt?: string; inputPatch?: Partial<ReconciliationWorkflowInput> } = {},
) {
  const provider = options.provider ?? 'sandbox-stripe';
  const receipt = await writeReceipt(receiptsDb(), profile, provider, event);
  const start = buildReconciliationStart(
    { provider, receiptId: receipt.receiptId, event: receipt.event, acknowledgedAt: options.acknowledgedAt ?? new Date().toISOString() },
    taskQueue,
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
