// I7, R15: an audit reader can trust the sequence. Checks that one reconciliation's transition rows, read in their
// recorded order, are a path of the state machine (config/reconciliation-states.yaml): each row leaves the state the
// previous one entered (the first leaves the initial state), the machine lists the transition for that actor, and
// nothing follows a terminal state. Pure: the caller loads the rules and the rows.
import type { ReconciliationRules, ReconciliationState, ReconciliationTransitionRule } from '../shared/inbound.js';
import { findTransition, isTerminal, RECONCILIATION_STATES } from './state-machine.js';

/** One row of reconciliation_transitions: `actor` is `system` or `operator:<name>` as the writers record it. */
export interface TransitionPathRow {
  from: string;
  to: string;
  actor: string;
}

export type TransitionPathProblem = 'broken_chain' | 'not_allowed' | 'actor_not_allowed' | 'after_terminal' | 'unknown_actor';

export interface TransitionPathViolation {
  /** Index of the offending row in the sequence given. */
  index: number;
  problem: TransitionPathProblem;
  row: TransitionPathRow;
  message: string;
}

/** system, operator, or null for an actor no writer records. */
export function actorKind(actor: string): ReconciliationTransitionRule['by'] | null {
  if (actor === 'system') return 'system';
  if (actor === 'operator' || actor.startsWith('operator:')) return 'operator';
  return null;
}

const isState = (s: string) => (RECONCILIATION_STATES as readonly string[]).includes(s);

/** Every way `rows` (one reconciliation, in recorded order) departs from a path the rules allow; [] when it is one. */
export function checkTransitionPaths(rules: ReconciliationRules, rows: readonly TransitionPathRow[]): TransitionPathViolation[] {
  const out: TransitionPathViolation[] = [];
  let state: string = rules.initial;
  let terminalAt: number | null = null;
  rows.forEach((row, index) => {
    const add = (problem: TransitionPathProblem, message: string) => out.push({ index, problem, row, message });
    const step = `${row.from} → ${row.to} by ${row.actor}`;
    if (terminalAt !== null) {
      add(
        'after_terminal',
        `row ${index} (${step}) follows the terminal state ${rows[terminalAt]!.to} entered at row ${terminalAt}`,
      );
    }
    if (row.from !== state) {
      add('broken_chain', `row ${index} (${step}) leaves ${row.from}, but the reconciliation was in ${state}`);
    }
    const kind = actorKind(row.actor);
    const listed = isState(row.from) && isState(row.to) && rules.transitions.some((t) => t.from === row.from && t.to === row.to);
    if (!listed) {
      add('not_allowed', `row ${index} (${step}): the state machine has no transition ${row.from} → ${row.to}`);
    } else if (kind === null) {
      add('unknown_actor', `row ${index} (${step}): actor is neither system nor operator`);
    } else if (!findTransition(rules, row.from as ReconciliationState, row.to as ReconciliationState, kind)) {
      add('actor_not_allowed', `row ${index} (${step}): ${row.from} → ${row.to} is not allowed for ${kind}`);
    }
    state = row.to;
    if (terminalAt === null && isState(row.to) && isTerminal(rules, row.to as ReconciliationState)) terminalAt = index;
  });
  return out;
}
