// Inbound reconciliation test helpers: a tiny provider payments API the test steers (until the sandbox is used),
// unique provider events, and starting a reconciliation workflow the way the ingress does.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import { and, eq } from 'drizzle-orm';
import type { Profile } from '../../src/config/profile.js';
import type { Db } from '../../src/db/client.js';
import { ledgerEntries, ledgerTransactions } from '../../src/db/schema/index.js';
import { buildReconciliationStart } from '../../src/inbound/start.js';
import { RECONCILIATION_WORKFLOW, type NormalizedProviderEvent, type ProviderPayment, type ReconciliationRules, type ReconciliationWorkflowInput } from '../../src/shared/inbound.js';

export type ProviderAnswer = ProviderPayment | 'error' | null;

/** GET /stripe/payments/:ref answers what the test set (null → 404, 'error' → 503, unset → 404). */
export async function startPaymentsPeer(): Promise<{
  baseUrl: string;
  set: (reference: string, answer: ProviderAnswer) => void;
  hits: (reference: string) => number;
  close: () => Promise<void>;
}> {
  const answers = new Map<string, ProviderAnswer>();
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const match = /^\/stripe\/payments\/([^/?]+)$/.exec(req.url ?? '');
    if (!match) return res.writeHead(404).end();
    const reference = decodeURIComponent(match[1]!);
    counts.set(reference, (counts.get(reference) ?? 0) + 1);
    const answer = answers.get(reference) ?? null;
    if (answer === 'error') return res.writeHead(503).end('provider outage');
    if (answer === null) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/stripe`,
    set: (reference, answer) => answers.set(reference, answer),
    hits: (reference) => counts.get(reference) ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
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

export async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
