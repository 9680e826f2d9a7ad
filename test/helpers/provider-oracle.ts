// L7: the provider as the oracle. Scenarios of provider-side actions per payment (what the provider's books do)
// and the webhooks a real provider sends for them; and the one place the property test resolves review items by
// the provider's truth through the operator resolution path.
import fc from 'fast-check';
import type { Client } from '@temporalio/client';
import type { reconciliations } from '../../src/db/schema/index.js';
import type { PaymentInput } from '../../src/sandbox/provider.js';
import type { SandboxEvent } from '../../src/sandbox/payloads.js';
import { reconciliationStateQuery, resolveUpdate, type ProviderPayment } from '../../src/shared/inbound.js';
import { waitFor } from './reconciliation.js';

export type Action =
  | { kind: 'refund' | 'dispute' | 'reversal'; share: number; secondEvent: boolean }
  | { kind: 'lateFailure' }
  | { kind: 'lowerAmount'; share: number };

export interface PaymentScenario {
  provider: 'stripe' | 'hmac' | 'hmac-noid';
  amount: number;
  pendingFirst: boolean;
  actions: Action[];
}

const share = fc.integer({ min: 1, max: 60 });
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('refund' as const, 'dispute' as const, 'reversal' as const), share, secondEvent: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'lateFailure' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lowerAmount' as const), share }) },
);

export const scenarioArbitrary = fc.record({
  payments: fc.array(
    fc.record({
      provider: fc.constantFrom('stripe' as const, 'hmac' as const, 'hmac-noid' as const),
      amount: fc.integer({ min: 200, max: 5000 }),
      pendingFirst: fc.boolean(),
      actions: fc.array(action, { maxLength: 4 }),
    }),
    { minLength: 2, maxLength: 3 },
  ),
  /** Drives delivery: how many pending webhooks go out after each provider action, which one, how often. */
  choices: fc.array(fc.nat({ max: 1000 }), { minLength: 64, maxLength: 64 }),
});

/** One webhook a real provider would send, and whether it may be lost for good (a redundant notification). */
export interface Webhook {
  event: Omit<SandboxEvent, 'amountMinor' | 'currency'> & { amountMinor: number; currency: string };
  droppable: boolean;
}

const LIST = { refund: 'refunds', dispute: 'disputes', reversal: 'reversals' } as const;
const TYPE = { refund: 'refund.succeeded', dispute: 'chargeback.created', reversal: 'payment.reversed' } as const;

/**
 * Plays one payment's actions on the provider's books, step by step: `apply(state)` writes the provider's new
 * state, and each step yields the webhooks it causes. Impossible actions (after a failure, more than is left)
 * are skipped, as the provider would refuse them.
 */
export function* providerSteps(reference: string, s: PaymentScenario, idPrefix: string): Generator<{ state: PaymentInput; webhooks: Webhook[] }> {
  const items = { refunds: [] as { id: string; amountMinor: number }[], disputes: [] as { id: string; amountMinor: number }[], reversals: [] as { id: string; amountMinor: number }[] };
  let amount = s.amount;
  let status: ProviderPayment['status'] = 'succeeded';
  const given = () => [...items.refunds, ...items.disputes, ...items.reversals].reduce((sum, i) => sum + i.amountMinor, 0);
  const state = (): PaymentInput => ({ status, amountMinor: amount, currency: 'EUR', refunds: [...items.refunds], disputes: [...items.disputes], reversals: [...items.reversals] });
  const withIds = s.provider !== 'hmac-noid';
  const capture: Webhook[] = [{ event: { type: 'payment.succeeded', reference, amountMinor: amount, currency: 'EUR' }, droppable: false }];
  if (s.pendingFirst) capture.unshift({ event: { type: 'payment.pending', reference, amountMinor: amount, currency: 'EUR' }, droppable: true });
  yield { state: state(), webhooks: capture };
  let n = 0;
  for (const a of s.actions) {
    if (status === 'failed') break;
    if (a.kind === 'lateFailure') {
      status = 'failed';
      yield { state: state(), webhooks: [{ event: { type: 'payment.failed', reference, amountMinor: amount, currency: 'EUR' }, droppable: false }] };
      continue;
    }
    const left = amount - given();
    const value = Math.floor((left * a.share) / 100);
    if (a.kind === 'lowerAmount') {
      if (value <= 0) continue;
      amount -= value;
      yield { state: state(), webhooks: [{ event: { type: 'payment.succeeded', reference, amountMinor: amount, currency: 'EUR' }, droppable: false }] };
      continue;
    }
    if (value <= 0) continue;
    const id = `${{ refund: 're', dispute: 'dp', reversal: 'rv' }[a.kind]}_${idPrefix}_${(n += 1)}`;
    items[LIST[a.kind]].push({ id, amountMinor: value });
    if (a.kind === 'refund' && status === 'succeeded') status = 'refunded';
    if (a.kind === 'dispute') status = 'disputed';
    const webhook = (): Webhook['event'] => ({ type: TYPE[a.kind], reference, amountMinor: value, currency: 'EUR', objectId: withIds ? id : null });
    // Providers often send a second, different event for one object (refund.created and charge.refunded).
    yield { state: state(), webhooks: [{ event: webhook(), droppable: false }, ...(a.secondEvent ? [{ event: webhook(), droppable: true }] : [])] };
  }
}

/** What the provider says is settled: nothing once failed, else the amount less every refund, dispute and reversal. */
export function providerTruth(p: ProviderPayment): bigint {
  if (p.status === 'failed') return 0n;
  return [...(p.refunds ?? []), ...(p.disputes ?? []), ...(p.reversals ?? [])].reduce((sum, i) => sum - BigInt(i.amountMinor), BigInt(p.amountMinor));
}

type Row = typeof reconciliations.$inferSelect;

/**
 * Decides one review item by the provider's truth: a discrepancy is applied (the ledger comes down to the report);
 * a capture only when the provider agrees with its amount and nothing is settled yet; a refund, dispute or reversal
 * only when the provider lists that object (or, without an id, an object of its amount) not yet posted. Everything
 * else is rejected.
 */
export function decideByTruth(row: Row, provider: ProviderPayment, posted: { capture: boolean; objectIds: Set<string> }): 'applied' | 'rejected' {
  if (row.discrepancy) return 'applied';
  if (provider.status === 'failed') return 'rejected';
  if (row.eventType === 'payment.succeeded') return !posted.capture && BigInt(provider.amountMinor) === row.amountMinor ? 'applied' : 'rejected';
  const list = row.eventType === 'refund.succeeded' ? provider.refunds : row.eventType === 'chargeback.created' ? provider.disputes : row.eventType === 'payment.reversed' ? provider.reversals : undefined;
  const open = (list ?? []).filter((i) => !posted.objectIds.has(i.id) && BigInt(i.amountMinor) === row.amountMinor);
  return open.some((i) => row.providerObjectId === null || i.id === row.providerObjectId) ? 'applied' : 'rejected';
}

/**
 * The resolution path (the workflow's `resolve` update), once the workflow itself is in manual_review (its
 * projection row is written a moment before); an applied the ledger refuses ("cannot apply") becomes rejected.
 */
export async function resolveByTruth(client: Client, row: Row, decision: 'applied' | 'rejected'): Promise<void> {
  const handle = client.workflow.getHandle(row.id);
  await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 30_000, `${row.id} in manual_review`);
  const resolve = (d: 'applied' | 'rejected') =>
    handle.executeUpdate(resolveUpdate, { args: [{ decision: d, operator: 'oracle@test', reason: `provider truth: ${d}` }] });
  try {
    await resolve(decision);
  } catch (error) {
    const message = String((error as { cause?: { message?: string } }).cause?.message ?? error);
    if (decision === 'rejected' || !message.includes('cannot apply')) throw error;
    await resolve('rejected');
  }
}
