// I7: loads config/reconciliation-states.yaml into plain data and checks transitions against it. Pure: the
// workflow imports assertTransition; only loadReconciliationRules (worker/ingress side) reads the file.
import type { ReconciliationRules, ReconciliationState, ReconciliationTransitionRule } from '../shared/inbound.js';

export { RECONCILIATION_STATES } from '../shared/inbound.js';

/** Error type name listed in the workflow's nonRetryableErrorTypes: an unlisted transition fails the run. */
export const ILLEGAL_TRANSITION = 'IllegalTransitionError';

export class IllegalTransitionError extends Error {
  override name = ILLEGAL_TRANSITION;
  constructor(
    readonly from: ReconciliationState,
    readonly to: ReconciliationState,
    readonly by: ReconciliationTransitionRule['by'],
  ) {
    super(`illegal reconciliation transition ${from} → ${to} by ${by}: not allowed by config/reconciliation-states.yaml`);
  }
}

export function findTransition(
  rules: ReconciliationRules,
  from: ReconciliationState,
  to: ReconciliationState,
  by: ReconciliationTransitionRule['by'],
): ReconciliationTransitionRule | undefined {
  return rules.transitions.find((t) => t.from === from && t.to === to && t.by === by);
}

/** Throws IllegalTransitionError unless the file lists from → to for this actor. */
export function assertTransition(
  rules: ReconciliationRules,
  from: ReconciliationState,
  to: ReconciliationState,
  by: ReconciliationTransitionRule['by'],
): void {
  if (!findTransition(rules, from, to, by)) throw new IllegalTransitionError(from, to, by);
}

export const isTerminal = (rules: ReconciliationRules, state: ReconciliationState) => rules.terminal.includes(state);
