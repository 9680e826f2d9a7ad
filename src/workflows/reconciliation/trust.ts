// R20: the workflow trusts the database, not its input. Behind its patch, a run's first step checks the start against
// PostgreSQL (the receipt, the event, the workflow id, a closed reconciliation, a sealed `continued` block:
// src/activities/reconciliation-trust.ts) and takes the rules and settings from that step's answer, i.e. from the
// worker's own profile, recorded once in this history. A refused start ends the run at once, failed with the reason,
// before anything is written or posted. Histories from before the patch replay with the rules and settings their
// input carried (docs/workflow-versioning.md).
import { ApplicationFailure, log, patched, workflowInfo } from '@temporalio/workflow';
import { RECONCILIATION_START_REFUSED, type ContinuedReconciliation } from '../../shared/inbound.js';
import { SEALED_CONTINUATION, TRUST_THE_DATABASE } from '../patches.js';
import { store } from './activities.js';
import type { Run } from './run.js';

/** Sets the run's rules, settings and initial state; throws ReconciliationStartRefused when the start is not trusted. */
export async function trustTheDatabase(run: Run): Promise<void> {
  const { input } = run;
  if (!patched(TRUST_THE_DATABASE)) {
    // Before R20 the start input carried them (and every such input did).
    run.rules = input.rules!;
    run.settings = input.settings!;
    run.state = input.continued ? 'reconciling' : run.rules.initial;
    return;
  }
  const { continuedFromExecutionRunId } = workflowInfo();
  const check = await store.checkReconciliationStart({
    reconciliationId: run.reconciliationId,
    ...(continuedFromExecutionRunId ? { continuedFromRunId: continuedFromExecutionRunId } : {}),
    provider: input.provider,
    receiptId: input.receiptId,
    event: input.event,
    ...(input.continued ? { continued: input.continued } : {}),
  });
  if (check.outcome === 'refused') {
    log.warn('reconciliation start refused', { reason: check.reason });
    throw ApplicationFailure.create({
      type: RECONCILIATION_START_REFUSED,
      message: `start refused: ${check.reason}`,
      nonRetryable: true,
    });
  }
  run.rules = check.rules;
  run.settings = check.settings;
  run.state = input.continued ? 'reconciling' : run.rules.initial;
}

/** The block for the next run, sealed by the worker when the run is past SEALED_CONTINUATION. */
export async function sealed(run: Run, continued: ContinuedReconciliation): Promise<ContinuedReconciliation> {
  if (!patched(SEALED_CONTINUATION)) return continued;
  const { seal } = await store.sealReconciliationContinuation({
    reconciliationId: run.reconciliationId,
    runId: workflowInfo().runId,
    continued,
  });
  return { ...continued, seal };
}
