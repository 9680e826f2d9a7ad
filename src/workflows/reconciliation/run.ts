// The state one reconciliation run carries between its phases, and the steps they share: the checked
// transition (I11), the projection recorded with it, and a ledger posting for this event.
import { ApplicationFailure, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { LedgerPostingResult } from '../../activities/reconciliation.js';
import { assertTransition, IllegalTransitionError, ILLEGAL_TRANSITION } from '../../inbound/state-machine.js';
import { postingKindFor, type Discrepancy, type ItemMatch } from '../../inbound/verdict.js';
import type { PostingKind } from '../../ledger/postings.js';
import type {
  OperatorResolution,
  ProposalDecision,
  ProviderPayment,
  ReconciliationProgress,
  ReconciliationRules,
  ReconciliationSettings,
  ReconciliationState,
  ReconciliationWorkflowInput,
  ResolutionAnswer,
  ResolutionProposal,
} from '../../shared/inbound.js';
import { SA } from '../../shared/search-attributes.js';
import { store } from './activities.js';

export interface ReconciliationOutcome {
  state: ReconciliationState;
  reason: string | null;
  ledgerTransactionId: string | null;
  auditId: string | null;
}

export type Actor = 'system' | `operator:${string}`;

export interface Run {
  readonly input: ReconciliationWorkflowInput;
  readonly reconciliationId: string;
  readonly postingKind: PostingKind | null;
  /** R20: the worker's state machine and profile settings, from the run's first step (trust.ts). */
  rules: ReconciliationRules;
  settings: ReconciliationSettings;
  state: ReconciliationState;
  reason: string | null;
  providerQueries: number;
  ledgerTransactionId: string | null;
  providerPayment: ProviderPayment | null;
  /** L1: the provider objects the last verdict matched (for an operator's applied); L5: the discrepancy found. */
  match: ItemMatch | undefined;
  discrepancy: Discrepancy | null;
  pendingResolution: OperatorResolution | undefined;
  resolutionOutcome: ResolutionAnswer | { error: string } | undefined;
  pendingVia: 'signal' | 'update';
  /** A4: which request the pending resolution came in (the activity reads its identity from the history). */
  pendingOrigin: { updateId?: string; signalIndex?: number };
  /** A24: the pending signal's request id had been spent before it arrived (an update's validator refuses those). */
  pendingSpent: boolean;
  /** A4: operatorResolution signals received by this run, in history order. */
  signalCount: number;
  readonly refusedResolutions: NonNullable<ReconciliationProgress['refusedResolutions']>;
  /** A5: the resolution waiting for a second principal, and an approval or cancellation of it being handled. */
  proposal: ResolutionProposal | null;
  pendingDecision: { kind: 'approve' | 'cancel'; decision: ProposalDecision; updateId: string | undefined } | undefined;
  decisionOutcome: ResolutionAnswer | { state: ReconciliationState; cancelled: string } | { error: string } | undefined;
  /** A4: request ids of the admin API that were acted on: a signed request copied from the history is not reused. */
  readonly usedRequestIds: string[];
  /** A24: request ids of the admin API this run accepted, refused or not: each is spent when it arrives. */
  readonly spentRequestIds: string[];
}

export function startRun(input: ReconciliationWorkflowInput): Run {
  const continued = input.continued;
  return {
    input,
    reconciliationId: workflowInfo().workflowId,
    postingKind: postingKindFor(input.event.type),
    // Set by the first step (trust.ts) before any is read; a run from before R20 takes its input's.
    rules: input.rules!,
    settings: input.settings!,
    state: continued ? 'reconciling' : (input.rules?.initial ?? 'received'),
    reason: null,
    providerQueries: continued?.providerQueries ?? 0,
    ledgerTransactionId: null,
    providerPayment: continued?.providerPayment ?? null,
    match: undefined,
    discrepancy: null,
    pendingResolution: undefined,
    resolutionOutcome: undefined,
    pendingVia: 'update',
    pendingOrigin: {},
    pendingSpent: false,
    signalCount: 0,
    refusedResolutions: [],
    proposal: null,
    pendingDecision: undefined,
    decisionOutcome: undefined,
    usedRequestIds: [],
    spentRequestIds: [],
  };
}

/** Checked before any side effect of the transition (a ledger posting), and again when it is made. */
export function ensureAllowed(run: Run, to: ReconciliationState, actor: Actor): void {
  try {
    assertTransition(run.rules, run.state, to, actor === 'system' ? 'system' : 'operator');
  } catch (error) {
    if (error instanceof IllegalTransitionError) {
      throw ApplicationFailure.create({ type: ILLEGAL_TRANSITION, message: error.message, nonRetryable: true });
    }
    throw error;
  }
}

export async function transition(run: Run, to: ReconciliationState, actor: Actor, why: string | null): Promise<void> {
  ensureAllowed(run, to, actor);
  await store.recordReconciliationTransition({ ...projection(run), from: run.state, to, actor, reason: why });
  run.state = to;
  run.reason = why;
  upsertSearchAttributes([{ key: SA.reconciliationState, value: to }]);
}

export const projection = (run: Run) => ({
  reconciliationId: run.reconciliationId,
  provider: run.input.provider,
  event: run.input.event,
  acknowledgedAt: run.input.acknowledgedAt,
  providerPayment: run.providerPayment && {
    amountMinor: run.providerPayment.amountMinor,
    currency: run.providerPayment.currency,
  },
  ledgerTransactionId: run.ledgerTransactionId,
  discrepancy: run.discrepancy,
});

export const post = (run: Run, kind: PostingKind, actor: string): Promise<LedgerPostingResult> =>
  store.postLedgerTransaction({
    kind,
    provider: run.input.provider,
    reconciliationId: run.reconciliationId,
    event: run.input.event,
    acknowledgedAt: run.input.acknowledgedAt,
    actor,
    ...(run.match ? { match: run.match } : {}),
  });
