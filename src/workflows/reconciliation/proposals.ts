// A5: a proposal above the dual-control amount waits in manual_review until a second principal approves it (the
// resolution is then committed as the proposer's, with the approval) or anyone cancels it (back to review). The
// activities attribute the request (A4) and refuse the proposer's own approval.
import { workflowInfo } from '@temporalio/workflow';
import type { OperatorResolution } from '../../shared/inbound.js';
import { failureType } from '../../shared/failures.js';
import { resolutions } from './activities.js';
import { commitResolution, finish } from './commit.js';
import type { ReconciliationOutcome, Run } from './run.js';

/** Handles the pending approve or cancel; the final outcome when an approval committed the resolution, else null. */
export async function decideProposal(run: Run): Promise<ReconciliationOutcome | null> {
  const { kind, decision, updateId } = run.pendingDecision!;
  const proposal = run.proposal!;
  const origin = { runId: workflowInfo().runId, via: 'update' as const, ...(updateId ? { updateId } : {}) };
  const fail = (problem: string) => {
    run.pendingDecision = undefined;
    run.decisionOutcome = { error: problem };
    return null;
  };
  if (kind === 'cancel') {
    let result: Awaited<ReturnType<typeof resolutions.cancelResolutionProposal>>;
    try {
      result = await resolutions.cancelResolutionProposal({
        reconciliationId: run.reconciliationId,
        proposalId: proposal.id,
        decision,
        origin,
      });
    } catch (error) {
      return fail(`could not be recorded (${failureType(error) ?? 'error'}); nothing was written; try again`);
    }
    if (result.status === 'refused') return fail(result.problem);
    if (decision.api) run.usedRequestIds.push(decision.api.requestId);
    run.proposal = null;
    run.pendingDecision = undefined;
    run.decisionOutcome = { state: run.state, cancelled: proposal.id };
    return null;
  }
  const resolution: OperatorResolution = {
    decision: proposal.decision,
    operator: proposal.proposedBy.name,
    reason: proposal.reason,
    ...(proposal.post !== undefined ? { post: proposal.post } : {}),
  };
  const result = await commitResolution(run, resolution, {
    origin,
    proposalId: proposal.id,
    approval: { proposalId: proposal.id, ...(decision.api ? { proof: decision.api } : {}) },
  });
  if (result.status === 'refused') return fail(result.problem);
  if (result.status === 'proposed') return fail('the approval was not recorded; try again');
  if (decision.api) run.usedRequestIds.push(decision.api.requestId);
  run.proposal = null;
  return finish(run, result, resolution.reason);
}
