// What the inbound side agrees on: the normalized provider event, the reconciliation workflow's name, input,
// signal/update/query names, and the provider payments API contract the sandbox serves and activities query.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AuditActor } from './audit.js';

/** Event types the platform understands; adapters map provider names onto these. */
export const PROVIDER_EVENT_TYPES = [
  'payment.succeeded', // capture: credits the payment (I8)
  'payment.failed', // never credits; never reverts a settled payment (I10)
  'payment.pending',
  'refund.succeeded', // I10: a new reversing transaction
  'chargeback.created',
  'payment.reversed',
] as const;
export type ProviderEventType = (typeof PROVIDER_EVENT_TYPES)[number];

/** What a provider adapter extracts from a verified webhook (I1). Amounts in minor units, as decimal strings. */
export interface NormalizedProviderEvent {
  providerEventId: string;
  type: ProviderEventType;
  paymentReference: string;
  amountMinor: string;
  /** ISO 4217, upper case (adapters normalize; the sandbox's ProviderPayment is upper case too). */
  currency: string;
  /** ISO 8601: when the provider says it happened (I10 ordering). */
  effectiveAt: string;
  /**
   * L1: the provider's own id of the refund, dispute or reversal a refund/chargeback/reversal event is about
   * (re_…, dp_…); absent for payment events and where the provider sends none.
   */
  providerObjectId?: string;
}

export interface ReconciliationInput {
  provider: string;
  receiptId: number;
  event: NormalizedProviderEvent;
  /** ISO 8601 time of the 200 to the provider: the start of the ack-to-ledger lag (I13). */
  acknowledgedAt: string;
}

export const RECONCILIATION_WORKFLOW = 'reconciliationWorkflow';

/** The one list of reconciliation states (I7): the type, the rules file's and the admin API's zod enums come from it. */
export const RECONCILIATION_STATES = ['received', 'reconciling', 'applied', 'rejected', 'manual_review'] as const;
export type ReconciliationState = (typeof RECONCILIATION_STATES)[number];

export const RESOLUTION_DECISIONS = ['applied', 'rejected', 'acknowledged'] as const;
/** applied: post (or find posted) and apply; rejected: post nothing; acknowledged: applied, the ledger is already right (L3). */
export type ResolutionDecision = (typeof RESOLUTION_DECISIONS)[number];

/**
 * L2: what an `applied` resolution posts where webhook and provider disagree: the provider's amount and currency
 * (the default), the webhook's, or an amount the operator states (positive minor units, ISO 4217).
 */
/** A11: an explicit amount in another currency than the payment's says why (currencyReason), and needs a second person. */
export type ResolutionPost = 'provider' | 'webhook' | { amountMinor: string; currency: string; currencyReason?: string };

export interface OperatorResolution {
  decision: ResolutionDecision;
  /** A2: from the admin API, the name of the key that resolves (never a body field). */
  operator: string;
  reason: string;
  post?: ResolutionPost;
  /** A4: set only by the admin API, signed (src/access/request-signing.ts); without it the request came through Temporal. */
  api?: ApiRequestProof;
  /** A3: set by the admin API (the key, its role, the request id); absent when sent to the workflow directly. */
  actor?: AuditActor;
}

/** A4: who sent a request through the admin API, signed with a key only the API and the workers derive. */
export interface ApiRequestProof {
  principal: { keyId: string; name: string; role: string };
  /** The server's id of the admin API request (A24: never the client's). */
  requestId: string;
  /** A24: when the admin API signed it (ISO 8601); it expires admin.signed_request_ttl later. */
  issuedAt: string;
  /** A24: the X-Request-Id the client sent, kept beside the server's in the audit row. */
  clientRequestId?: string;
  signingKeyId: string;
  signature: string;
}

/** A4: who a resolution, approval or cancellation is attributed to, and which way it came. */
export interface ResolutionPrincipal {
  /** apk_… or bootstrap (admin API), temporal:<identity> (an update or signal sent to Temporal directly). */
  key: string;
  name: string;
  role: string | null;
  via: 'api' | 'temporal';
  requestId: string | null;
  /** A24: the client's X-Request-Id of the admin API request, when it sent one. */
  clientRequestId?: string | null;
}

/** A5: a resolution above the dual-control amount, waiting for a second principal. */
export interface ResolutionProposal {
  id: string;
  decision: ResolutionDecision;
  reason: string;
  post?: ResolutionPost;
  proposedBy: ResolutionPrincipal;
  proposedAt: string;
}

/** A5: the approve and cancel updates name the proposal they decide. */
export interface ProposalDecision {
  proposalId: string;
  api?: ApiRequestProof;
}

/**
 * What the resolve update answers: the state reached, the audit row and the transaction it posted (or null); under
 * dual control (A5) the proposal that now waits for approval (state still manual_review, no audit row yet).
 */
export interface ResolutionAnswer {
  state: ReconciliationState;
  auditId: string | null;
  ledgerTransactionId: string | null;
  proposal?: ResolutionProposal;
}

/** I11: usable from the Temporal UI and the CLI (`temporal workflow signal --name operatorResolution`). */
export const operatorResolutionSignal = defineSignal<[OperatorResolution]>('operatorResolution');
/** I11: the same as an update, which answers with the outcome or refuses an invalid resolution. */
export const resolveUpdate = defineUpdate<ResolutionAnswer, [OperatorResolution]>('resolve');
export const reconciliationStateQuery = defineQuery<ReconciliationProgress>('state');
/** A5: a second principal approves the waiting proposal (then it is posted), or anyone cancels it (back to review). */
export const approveResolutionUpdate = defineUpdate<ResolutionAnswer, [ProposalDecision]>('approveResolution');
export const cancelResolutionUpdate = defineUpdate<{ state: ReconciliationState; cancelled: string }, [ProposalDecision]>('cancelResolution');

/**
 * The provider payments API (the sandbox serves it; activities query it):
 *   GET {api_base_url}/payments/{paymentReference} → 200 ProviderPayment | 404 (unknown) | 5xx (provider error)
 */
export interface ProviderPayment {
  reference: string;
  status: 'succeeded' | 'failed' | 'pending' | 'refunded' | 'disputed';
  amountMinor: string;
  currency: string;
  /** L1: the provider's objects that give money back, each with its own id, matched one for one to events. */
  refunds?: ProviderItem[];
  disputes?: ProviderItem[];
  reversals?: ProviderItem[];
}

/** One refund, dispute (chargeback) or reversal as the provider lists it, in the payment's currency. */
export interface ProviderItem {
  id: string;
  amountMinor: string;
}

/** I7: the state machine of config/reconciliation-states.yaml as plain data (the workflow cannot read files). */
export interface ReconciliationTransitionRule {
  from: ReconciliationState;
  to: ReconciliationState;
  /** system: the workflow itself; operator: only through an operator resolution (I11). */
  by: 'system' | 'operator';
}
export interface ReconciliationRules {
  initial: ReconciliationState;
  terminal: ReconciliationState[];
  transitions: ReconciliationTransitionRule[];
}

/** The profile values the workflow needs, in milliseconds (from `inbound.*`). */
export interface ReconciliationSettings {
  /** I8: unknown outcome this long after the acknowledgement (acknowledgedAt) → manual_review. */
  timeoutMs: number;
  backoff: { initialMs: number; multiplier: number; maximumMs: number };
  /** I12: false unless the profile says `allow_provisional_access: true`. */
  allowProvisionalAccess: boolean;
  /** A4: whether a resolution sent to Temporal directly (UI, CLI) is accepted; absent (older runs) = deny. */
  resolutionViaTemporal?: 'allow' | 'deny';
}

/**
 * What the reconciliation workflow is started with: the ingress's ReconciliationInput (built by
 * buildReconciliationStart, src/inbound/start.ts). R20: the run trusts none of it until its first step has found the
 * receipt in PostgreSQL and the event equal to it; the rules and settings then come from the worker's own profile,
 * recorded in history by that step. Runs started before R20 carried `rules` and `settings` here and still replay
 * with them; a run past the patch ignores both.
 */
export interface ReconciliationWorkflowInput extends ReconciliationInput {
  /** Before R20 only (open executions and their histories); ignored by newer runs. */
  rules?: ReconciliationRules;
  /** Before R20 only (open executions and their histories); ignored by newer runs. */
  settings?: ReconciliationSettings;
  /**
   * Set only by the workflow itself when a long reconciliation continues as new (bounded history): where the
   * provider-query loop was. Starters never set it. R20: `seal` is the worker's MAC over the block, bound to the
   * run that continued; a block without a valid seal is refused.
   */
  continued?: ContinuedReconciliation;
  /** Provider queries per run before continuing as new (default 500; tests lower it). */
  queriesPerRun?: number;
}

/** The provider-query loop carried to the next run (R20: sealed by the run that wrote it). */
export interface ContinuedReconciliation {
  deadline: number;
  delayMs: number;
  providerQueries: number;
  provisionalPosted: boolean;
  providerPayment: ProviderPayment | null;
  seal?: string;
}

/** R20: the failure type a reconciliation ends with when its start input is not what the database holds. */
export const RECONCILIATION_START_REFUSED = 'ReconciliationStartRefused';

/** R20: what the first step of a run answers: the worker's rules and settings, or why the start is refused. */
export type ReconciliationStartCheck =
  | { outcome: 'trusted'; rules: ReconciliationRules; settings: ReconciliationSettings }
  | { outcome: 'refused'; reason: string };

/** What the `state` query answers beyond the state: enough for an operator to see why it is waiting. */
export interface ReconciliationProgress {
  state: ReconciliationState;
  reason: string | null;
  providerQueries: number;
  ledgerTransactionId: string | null;
  /** R2: resolutions refused (invalid input, or the ledger refused the posting), newest last, at most 20. */
  refusedResolutions?: { operator: string | null; problem: string; via: 'signal' | 'update' }[];
  /** A5: the resolution waiting for a second principal's approval, or null. */
  proposal?: ResolutionProposal | null;
}

/** L5: the ledger's side of a payment (strings: it crosses the activity boundary). Here so the schema of `reconciliations` can name it. */
export interface LedgerPosition {
  transactionId: string;
  capturedMinor: string;
  settledMinor: string;
  currency: string;
}

/** L5: posted and reported state side by side, kept on the reconciliation for the operator. */
export interface Discrepancy {
  posted: LedgerPosition;
  reported: { status: ProviderPayment['status']; amountMinor: string; currency: string; settledMinor: string };
}

/** What the ledger-posting activity answers (in src/shared: src/inbound/posting-outcome.ts reads it). */
export type LedgerPostingResult =
  | { status: 'posted' | 'replayed'; transactionId: string; postedAt: string; providerEventId: string; providerObjectId?: string }
  | { status: 'awaiting_capture' }
  /** L1: the object (or, for a payment, the capture) was already posted by another event: nothing new. */
  | { status: 'duplicate'; transactionId: string; providerEventId: string; providerObjectId?: string }
  /** L1: matched by amount, and every listed object of that amount is claimed by other events. */
  | { status: 'no_unclaimed_item'; claimed: { providerObjectId: string; providerEventId: string }[] };
