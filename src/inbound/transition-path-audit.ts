// I7, R15: reads reconciliation_transitions and checks every reconciliation's rows, in the order they were recorded
// (the row's time, then its id for rows of one instant), against the state machine (./transition-paths.ts). Used
// after integration test files and at the end of the soak; read-only.
import type { Sql } from 'postgres';
import type { ReconciliationRules } from '../shared/inbound.js';
import { loadReconciliationRules } from './load-rules.js';
import { checkTransitionPaths, type TransitionPathRow, type TransitionPathViolation } from './transition-paths.js';

export interface ReconciliationPathViolation extends TransitionPathViolation {
  reconciliationId: string;
}

interface Row {
  reconciliation_id: string;
  from_state: string;
  to_state: string;
  actor: string;
}

/** Every violation over all reconciliations (or only those whose id starts with `idPrefix`); [] when all are paths. */
export async function findTransitionPathViolations(
  sql: Sql,
  options: { rules?: ReconciliationRules; idPrefix?: string } = {},
): Promise<ReconciliationPathViolation[]> {
  const rules = options.rules ?? loadReconciliationRules();
  const filter = options.idPrefix === undefined ? sql`` : sql`where reconciliation_id like ${likePrefix(options.idPrefix)}`;
  const rows = await sql<Row[]>`
    select reconciliation_id, from_state, to_state, actor
      from reconciliation_transitions ${filter}
     order by reconciliation_id, at, id`;
  const byReconciliation = new Map<string, TransitionPathRow[]>();
  for (const r of rows) {
    let list = byReconciliation.get(r.reconciliation_id);
    if (!list) byReconciliation.set(r.reconciliation_id, (list = []));
    list.push({ from: r.from_state, to: r.to_state, actor: r.actor });
  }
  const out: ReconciliationPathViolation[] = [];
  for (const [reconciliationId, list] of byReconciliation) {
    for (const v of checkTransitionPaths(rules, list)) out.push({ reconciliationId, ...v });
  }
  return out;
}

const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
