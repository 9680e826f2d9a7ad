// One reconciliation per provider event (I6–I12): ask the provider (authoritative), post to the ledger when
// confirmed and matching, park conflicts and timeouts in manual_review for an audited operator resolution.
// The phases in order: trust the database (R20: the start checked against the receipt, the worker's rules and
// settings), query the provider, settle, operator review.
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { ReconciliationWorkflowInput } from '../../shared/inbound.js';
import { SA } from '../../shared/search-attributes.js';
import { store } from './activities.js';
import { registerHandlers } from './handlers.js';
import { operatorReview } from './operator-review.js';
import { queryProvider } from './query-provider.js';
import { projection, startRun, transition, type ReconciliationOutcome } from './run.js';
import { settle } from './settle.js';
import { trustTheDatabase } from './trust.js';

export { ONE_TRANSACTION_RESOLUTION } from '../patches.js';
export type { ReconciliationOutcome } from './run.js';

export async function reconciliationWorkflow(input: ReconciliationWorkflowInput): Promise<ReconciliationOutcome> {
  const run = startRun(input);
  registerHandlers(run);
  upsertSearchAttributes([
    { key: SA.reconciliationState, value: run.state },
    { key: SA.provider, value: input.provider },
  ]);
  await trustTheDatabase(run);
  if (!input.continued) {
    await store.recordReconciliationTransition({ ...projection(run), from: null, to: run.state, actor: 'system', reason: null });
    await transition(run, 'reconciling', 'system', null);
  }
  const verdict = await queryProvider(run);
  return (await settle(run, verdict)) ?? (await operatorReview(run));
}
