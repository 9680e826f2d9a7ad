// L2: what an operator's `applied` posts. By default the provider's amount and currency (the provider is
// authoritative), else the webhook's or an amount the operator states; a reversal takes the provider's amount
// only when the provider lists exactly one item for it to mean. Pure: no I/O.
import type { PostingKind } from '../ledger/postings.js';
import type { NormalizedProviderEvent, ProviderPayment, ResolutionPost } from '../shared/inbound.js';

export type PostBasis = 'provider' | 'webhook' | 'explicit';

export type ResolutionAmount =
  | { ok: true; basis: PostBasis; amountMinor: string; currency: string }
  | { ok: false; problem: string };

export function resolutionAmount(
  kind: PostingKind,
  event: Pick<NormalizedProviderEvent, 'amountMinor' | 'currency'>,
  provider: Pick<ProviderPayment, 'amountMinor' | 'currency' | 'refunds'> | null,
  post: ResolutionPost = 'provider',
): ResolutionAmount {
  if (post === 'webhook') return { ok: true, basis: 'webhook', amountMinor: event.amountMinor, currency: event.currency };
  if (typeof post === 'object') return { ok: true, basis: 'explicit', amountMinor: post.amountMinor, currency: post.currency };
  if (!provider) return { ok: false, problem: 'the provider never answered: state post "webhook" or an explicit amount' };
  if (kind === 'payment') return { ok: true, basis: 'provider', amountMinor: provider.amountMinor, currency: provider.currency };
  const items = provider.refunds ?? [];
  if (items.length !== 1) {
    return { ok: false, problem: `the provider lists ${items.length} refund/dispute items: state post "webhook" or an explicit amount` };
  }
  return { ok: true, basis: 'provider', amountMinor: items[0]!.amountMinor, currency: provider.currency };
}
