// Phase 3, operator review (I11, R2): only an operator leaves manual_review, in one transaction that writes
// the posting, the audit row and the transition, and every resolution leaves one audit row. A4/A5 (behind
// their patch): the activity attributes the request (admin API signature, or the identity Temporal recorded)
// and, above the dual-control amount, records a proposal that a second principal approves (proposals.ts).
import { condition, patched, uuid4, workflowInfo } from '@temporalio/workflow';
import { commitResolution, finish, type AccessCommand } from './commit.js';
import { accessProblem, refuse } from './handlers.js';
import { legacyResolve } from './legacy-resolution.js';
import { decideProposal } from './proposals.js';
import { ONE_TRANSACTION_RESOLUTION, RESOLUTION_ACCESS } from '../patches.js';
import { ensureAllowed, type ReconciliationOutcome, type Run } from './run.js';

export async function operatorReview(run: Run): Promise<ReconciliationOutcome> {
  for (;;) {
    await condition(() => run.pendingResolution !== undefined || run.pendingDecision !== undefined);
    if (run.pendingDecision) {
      // A5: only executions past the access patch ever hold a proposal (the updates' validators need one).
      const done = await decideProposal(run);
      if (done) return done;
      continue;
    }
    const resolution = run.pendingResolution!;
    const actor = `operator:${resolution.operator.trim()}` as const;
    const to = resolution.decision === 'rejected' ? 'rejected' : 'applied';
    ensureAllowed(run, to, actor);
    if (!patched(ONE_TRANSACTION_RESOLUTION)) {
      const legacy = await legacyResolve(run, resolution, actor);
      if (legacy) return legacy;
      continue;
    }
    let access: AccessCommand | undefined;
    if (patched(RESOLUTION_ACCESS)) {
      // A4: a signal cannot be refused by a validator; it is refused here, before anything runs.
      const problem = accessProblem(run, resolution);
      if (problem) {
        refuse(run, resolution, problem, run.pendingVia);
        run.pendingResolution = undefined;
        run.resolutionOutcome = { error: problem };
        continue;
      }
      const { runId } = workflowInfo();
      access = { origin: { runId, via: run.pendingVia, ...run.pendingOrigin }, proposalId: `rpr_${uuid4()}` };
    }
    const result = await commitResolution(run, resolution, access);
    if (result.status === 'refused') {
      refuse(run, resolution, result.problem, run.pendingVia);
      run.pendingResolution = undefined;
      run.resolutionOutcome = { error: result.problem };
      continue;
    }
    if (resolution.api) run.usedRequestIds.push(resolution.api.requestId);
    if (result.status === 'proposed') {
      // A5: nothing is posted; the reconciliation stays in manual_review until approved or cancelled.
      run.proposal = result.proposal;
      run.pendingResolution = undefined;
      run.resolutionOutcome = { state: run.state, auditId: null, ledgerTransactionId: null, proposal: result.proposal };
      continue;
    }
    return finish(run, result, resolution.reason);
  }
}
