// L2: what an operator's `applied` posts. By default the provider's amount and currency (the provider is
// authoritative), else the webhook's or an amount the operator states; a refund, chargeback or reversal takes
// the provider's amount of the object the event names, or of the one object the provider lists of that kind.
// L1: that object's id keys the posting, so an object is posted once whoever applies it. Pure: no I/O.
import type { PostingKind } from '../ledger/postings.js';
import type { NormalizedProviderEvent, ProviderPayment, ResolutionPost } from '../shared/inbound.js';
import { itemNoun, providerItems } from './verdict.js';

export type PostBasis = 'provider' | 'webhook' | 'explicit';

export type ResolutionAmount =
  | {
      ok: true;
      basis: PostBasis;
      amountMinor: string;
      currency: string;
      /** L1: the provider object posted (by the event's id, or the only one listed), absent: keyed by the event. */
      providerObjectId?: string;
      matchedBy?: 'id' | 'operator';
    }
  | { ok: false; problem: string };

export function resolutionAmount(
  kind: PostingKind,
  event: Pick<NormalizedProviderEvent, 'amountMinor' | 'currency' | 'providerObjectId'>,
  provider: Pick<ProviderPayment, 'amountMinor' | 'currency' | 'refunds' | 'disputes' | 'reversals'> | null,
  post: ResolutionPost = 'provider',
): ResolutionAmount {
  const items = provider && kind !== 'payment' ? providerItems(kind, provider) : [];
  const named = event.providerObjectId ? items.find((i) => i.id === event.providerObjectId) : undefined;
  const object = named ? { providerObjectId: named.id, matchedBy: 'id' as const } : {};
  if (post === 'webhook') return { ok: true, basis: 'webhook', amountMinor: event.amountMinor, currency: event.currency, ...object };
  if (typeof post === 'object') return { ok: true, basis: 'explicit', amountMinor: post.amountMinor, currency: post.currency, ...object };
  if (!provider) return { ok: false, problem: 'the provider never answered: state post "webhook" or an explicit amount' };
  if (kind === 'payment') return { ok: true, basis: 'provider', amountMinor: provider.amountMinor, currency: provider.currency };
  if (named) return { ok: true, basis: 'provider', amountMinor: named.amountMinor, currency: provider.currency, ...object };
  if (event.providerObjectId) {
    return { ok: false, problem: `the provider lists no ${itemNoun(kind)} ${event.providerObjectId}: state post "webhook" or an explicit amount` };
  }
  if (items.length !== 1) {
    return { ok: false, problem: `the provider lists ${items.length} ${itemNoun(kind)} items: state post "webhook" or an explicit amount` };
  }
  return { ok: true, basis: 'provider', amountMinor: items[0]!.amountMinor, currency: provider.currency, providerObjectId: items[0]!.id, matchedBy: 'operator' };
}
