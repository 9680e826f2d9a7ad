// Ledger domain (I9, I10): accounts, the postings each event kind makes, their idempotency keys and content hash.
// No framework here: src/ledger/store.ts writes these postings, the activities decide when.
import { createHash } from 'node:crypto';

/** Kinds an event's posting has (buildPosting); an operator's `adjustment` (L3) is built by buildAdjustment. */
export const POSTING_KINDS = ['payment', 'refund', 'chargeback', 'reversal', 'provisional', 'provisional_release'] as const;
export type PostingKind = (typeof POSTING_KINDS)[number] | 'adjustment';
/** Kinds that give money back: new transactions bounded by what is still settled on the payment (I10). */
export const REVERSAL_KINDS: readonly PostingKind[] = ['refund', 'chargeback', 'reversal'];

export const accounts = {
  /** What the provider holds for us: debited when a payment settles, credited when it is given back. */
  providerClearing: (provider: string) => `provider_clearing:${provider}`,
  /** The settled payment: its credit balance is what is settled and can still be refunded. */
  payment: (provider: string, reference: string) => `payments:${provider}:${reference}`,
  /** I12: provisional credit lives on its own accounts, never mixed with settled balances. */
  provisionalClearing: (provider: string) => `provisional_clearing:${provider}`,
  provisional: (provider: string, reference: string) => `provisional:${provider}:${reference}`,
};

export interface LedgerEntryDraft {
  account: string;
  /** Signed minor units: debit > 0, credit < 0. */
  amountMinor: bigint;
  currency: string;
}

export interface Posting {
  idempotencyKey: string;
  kind: PostingKind;
  provider: string;
  paymentReference: string;
  currency: string;
  amountMinor: bigint;
  entries: LedgerEntryDraft[];
}

export interface PostingRequest {
  kind: PostingKind;
  provider: string;
  providerEventId: string;
  /** L1: the provider's id of the refund, dispute or reversal: the key of a reversing posting. */
  providerObjectId?: string;
  paymentReference: string;
  /** Positive minor units as a decimal string. */
  amountMinor: string;
  currency: string;
}

export class LedgerValidationError extends Error {
  override name = 'LedgerValidationError';
}

/**
 * The idempotency key says what may happen only once. A payment settles once per payment reference, whatever
 * event ids the provider uses for it (two "succeeded" events never credit twice); a refund, chargeback or
 * reversal once per provider object (L1: its own id, re_…, dp_…, under its payment), whatever events report it, or once per event
 * where no object is known (an operator applying an event the provider does not list); provisional credit and
 * its release once per event.
 */
export function idempotencyKey(
  request: Pick<PostingRequest, 'kind' | 'provider' | 'providerEventId' | 'paymentReference' | 'providerObjectId'>,
): string {
  if (request.kind === 'payment') return `${request.provider}:${request.paymentReference}:payment`;
  if (REVERSAL_KINDS.includes(request.kind) && request.providerObjectId) {
    return `${request.provider}:${request.paymentReference}:${request.kind}:${request.providerObjectId}`;
  }
  return `${request.provider}:${request.providerEventId}:${request.kind}`;
}

export function buildPosting(request: PostingRequest): Posting {
  if (!/^[1-9]\d*$/.test(request.amountMinor)) throw new LedgerValidationError(`amount ${request.amountMinor} is not a positive integer of minor units`);
  if (!/^[A-Z]{3}$/.test(request.currency)) throw new LedgerValidationError(`currency ${request.currency} is not an ISO 4217 code`);
  const amount = BigInt(request.amountMinor);
  const { provider, paymentReference: ref, currency } = request;
  const pair = (debit: string, credit: string): LedgerEntryDraft[] => [
    { account: debit, amountMinor: amount, currency },
    { account: credit, amountMinor: -amount, currency },
  ];
  let entries: LedgerEntryDraft[];
  switch (request.kind) {
    case 'payment':
      entries = pair(accounts.providerClearing(provider), accounts.payment(provider, ref));
      break;
    case 'refund':
    case 'chargeback':
    case 'reversal':
      entries = pair(accounts.payment(provider, ref), accounts.providerClearing(provider));
      break;
    case 'provisional':
      entries = pair(accounts.provisionalClearing(provider), accounts.provisional(provider, ref));
      break;
    case 'provisional_release':
      entries = pair(accounts.provisional(provider, ref), accounts.provisionalClearing(provider));
      break;
    case 'adjustment':
      throw new LedgerValidationError('an adjustment is built with buildAdjustment');
  }
  return { idempotencyKey: idempotencyKey(request), kind: request.kind, provider, paymentReference: ref, currency, amountMinor: amount, entries };
}

/**
 * The content a key stands for: kind, payment and the entries (accounts, amounts, currency). Event ids and
 * effective times are metadata, so the same settlement reported by two events is the same content. A21: the
 * database computes the same hash (apipay_ledger_content_hash, migration 0029), so the entries are sorted by their
 * JSON text byte by byte (PostgreSQL's COLLATE "C"), not by a locale.
 */
export function contentHash(posting: Posting): string {
  const entries = posting.entries
    .map((e) => JSON.stringify([e.account, e.currency, e.amountMinor.toString()]))
    .sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  const head = JSON.stringify({ key: posting.idempotencyKey, kind: posting.kind, payment: `${posting.provider}:${posting.paymentReference}` });
  const canonical = `${head.slice(0, -1)},"entries":[${entries.join(',')}]}`;
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * The hash of rows posted before migration 0029: the same canonical JSON with the entries sorted by the locale
 * (localeCompare). The ledger check (L6) accepts it for those rows; nothing writes it any more.
 */
export function legacyContentHash(posting: Posting): string {
  const canonical = JSON.stringify({
    key: posting.idempotencyKey,
    kind: posting.kind,
    payment: `${posting.provider}:${posting.paymentReference}`,
    entries: posting.entries.map((e) => [e.account, e.currency, e.amountMinor.toString()]).sort((a, b) => a.join('|').localeCompare(b.join('|'))),
  });
  return createHash('sha256').update(canonical).digest('hex');
}

export function isBalanced(entries: LedgerEntryDraft[]): boolean {
  const sums = new Map<string, bigint>();
  for (const e of entries) sums.set(e.currency, (sums.get(e.currency) ?? 0n) + e.amountMinor);
  return [...sums.values()].every((sum) => sum === 0n);
}

export interface AdjustmentRequest {
  adjustmentKey: string;
  provider: string;
  paymentReference: string;
  /** Signed minor units: > 0 adds to what is settled on the payment, < 0 gives back (L3). */
  amountMinor: string;
  currency: string;
}

/** L3: an operator's correcting transaction between the provider's clearing account and the payment. */
export function buildAdjustment(request: AdjustmentRequest): Posting {
  if (!/^-?[1-9]\d{0,17}$/.test(request.amountMinor)) throw new LedgerValidationError(`amount ${request.amountMinor} is not a non-zero integer of minor units`);
  if (!/^[A-Z]{3}$/.test(request.currency)) throw new LedgerValidationError(`currency ${request.currency} is not an ISO 4217 code`);
  const amount = BigInt(request.amountMinor);
  const { provider, paymentReference: ref, currency } = request;
  return {
    idempotencyKey: `${provider}:${ref}:adjustment:${request.adjustmentKey}`,
    kind: 'adjustment',
    provider,
    paymentReference: ref,
    currency,
    amountMinor: amount,
    entries: [
      { account: accounts.providerClearing(provider), amountMinor: amount, currency },
      { account: accounts.payment(provider, ref), amountMinor: -amount, currency },
    ],
  };
}
