// R2, A3, A4, A5, A11, A12, L5: what an operator resolution commits (./resolution-store.ts) is given and answers: the
// command (the decision, the event and the provider's payment, the access the request came with), the access the
// activity resolved from it (principal, money limits, the person's keys), and the answer (committed, proposed for a
// second person's approval, or refused), plus the audit actor of a resolution that did not come through the admin API.
import type { AuditActor } from '../audit/record.js';
import type { PostingKind } from '../ledger/postings.js';
import type { MoneyLimits } from '../ledger/money-policy.js';
import type {
  NormalizedProviderEvent,
  OperatorResolution,
  ProposalDecision,
  ProviderPayment,
  ReconciliationState,
  ResolutionPrincipal,
  ResolutionProposal,
} from '../shared/inbound.js';
import type { RequestOrigin } from './resolution-access.js';
import type { Discrepancy } from './verdict.js';

export interface ResolutionCommand {
  reconciliationId: string;
  provider: string;
  event: NormalizedProviderEvent;
  /** The posting an `applied` makes for this event type, or null (events that never move money). */
  postingKind: PostingKind | null;
  providerPayment: Pick<ProviderPayment, 'amountMinor' | 'currency' | 'refunds' | 'disputes' | 'reversals'> | null;
  resolution: OperatorResolution;
  previousState: ReconciliationState;
  /** L5: a discrepancy after settlement: `applied` posts the settlement correction instead of the event's posting. */
  discrepancy?: Discrepancy | null;
  /**
   * A4/A5 (workflows past the access patch): where the request is in the history (its identity), the id a
   * proposal gets, and for an approval the proposal it approves with the approver's signed request.
   */
  access?: { origin: RequestOrigin; proposalId: string; approval?: { proposalId: string; proof?: ProposalDecision['api'] } };
}

/** What the activity resolved from `access`: who sent the request, the money policy's limits, whether it approves. */
export interface ResolvedAccess {
  principal: ResolutionPrincipal;
  /** A11: the one money policy's limits (src/ledger/money-policy.ts). */
  limits: MoneyLimits;
  /** A12: every key id of the person who sent it (their budget is shared); absent: the principal's key alone. */
  personKeys?: string[];
  proposalId: string;
  /** Set when the request approves this proposal: the principal above is the approver. */
  approves?: string;
}

export type ResolutionCommit =
  | {
      status: 'committed';
      state: ReconciliationState;
      auditId: string;
      ledgerTransactionId: string | null;
      replayed: boolean;
      note: string | null;
    }
  | { status: 'proposed'; proposal: ResolutionProposal }
  | { status: 'refused'; problem: string };

/** The state a decision leads to: `acknowledged` is applied without a posting of its own (L3). */
/** A resolution the admin API did not send (a signal or update from the Temporal UI) names only its operator text. */
export const actorOfResolution = (r: OperatorResolution, operator: string): AuditActor =>
  r.actor ?? { keyId: null, name: operator, role: null, requestId: null, via: 'temporal' };

export const stateFor = (decision: OperatorResolution['decision']): ReconciliationState =>
  decision === 'rejected' ? 'rejected' : 'applied';
