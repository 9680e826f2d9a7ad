// What a ledger posting's answer means for the reconciliation (L1): posted, a duplicate of what another event
// posted (nothing new, recorded as such), no unclaimed provider object, or waiting for the capture. Pure: the
// workflow imports it.
import type { PostingKind } from '../ledger/postings.js';
import type { LedgerPostingResult, NormalizedProviderEvent } from '../shared/inbound.js';
import { itemNoun, type Verdict } from './verdict.js';

export type PostingOutcome =
  | { kind: 'posted'; transactionId: string }
  | { kind: 'awaiting_capture'; verdict: Verdict }
  /** duplicate → rejected (stale), no_unclaimed_item → manual_review (conflict). */
  | { kind: 'refused'; verdict: Verdict };

export function postingOutcome(result: LedgerPostingResult, kind: PostingKind, event: NormalizedProviderEvent): PostingOutcome {
  switch (result.status) {
    case 'posted':
    case 'replayed':
      return { kind: 'posted', transactionId: result.transactionId };
    case 'awaiting_capture':
      return { kind: 'awaiting_capture', verdict: { kind: 'unknown', reason: `awaiting_capture: the ${kind} waits for the payment's capture in the ledger` } };
    case 'duplicate': {
      const what = kind === 'payment' ? 'payment already settled' : `${itemNoun(kind)} ${result.providerObjectId ?? ''} already posted`;
      return { kind: 'refused', verdict: { kind: 'stale', reason: `duplicate: ${what} by event ${result.providerEventId} (${result.transactionId}); nothing posted` } };
    }
    case 'no_unclaimed_item': {
      const claimed = result.claimed.map((c) => `${c.providerObjectId} by event ${c.providerEventId}`).join(', ');
      return {
        kind: 'refused',
        verdict: {
          kind: 'conflict',
          reason: `no_unclaimed_item: every ${itemNoun(kind)} of ${event.amountMinor} ${event.currency} the provider lists is already posted (${claimed})`,
        },
      };
    }
  }
}
