// The operator's ways in (I11, R2): the state query, the resolution signal (cannot answer, so a refusal is
// recorded) and the resolve update (validated, answered with the outcome or refused); A5's approve and cancel
// updates of a proposal waiting for a second principal. A4: a request without the admin API's signature came
// through Temporal directly; the update's validator refuses it when the profile denies that way.
import { ApplicationFailure, condition, currentUpdateInfo, log, setHandler } from '@temporalio/workflow';
import {
  approveResolutionUpdate,
  cancelResolutionUpdate,
  operatorResolutionSignal,
  reconciliationStateQuery,
  resolveUpdate,
  type OperatorResolution,
  type ProposalDecision,
  type ReconciliationProgress,
  type ReconciliationState,
} from '../../shared/inbound.js';
import { OPERATOR_MAX, resolutionInputProblem, textProblem } from '../../shared/operator-input.js';
import type { Run } from './run.js';

const MAX_REFUSALS_KEPT = 20;

export const TEMPORAL_PATH_DENIED =
  'resolutions sent to Temporal directly are switched off (profile inbound.resolution_via_temporal: deny): use the admin API or the apipay CLI';

function resolutionProblem(resolution: OperatorResolution, state: ReconciliationState, pending: boolean): string | null {
  if (state !== 'manual_review') return `not in manual_review (state ${state})`;
  if (pending) return 'already resolved';
  return resolutionInputProblem(resolution);
}

export const REQUEST_ALREADY_USED = 'this admin API request was already used';

/** A4/A5 checks that need no activity: the way in allowed, a waiting proposal, a signed request not used before. */
export function accessProblem(run: Run, request: { api?: { requestId?: unknown } } | undefined): string | null {
  const denied = pathProblem(run, request);
  if (denied) return denied;
  const id = request?.api ? String(request.api.requestId) : undefined;
  if (id !== undefined && (run.usedRequestIds.includes(id) || run.spentRequestIds.includes(id))) return REQUEST_ALREADY_USED;
  return null;
}

/** A4: a request without the admin API's signature, when the profile denies Temporal's way in. */
export function pathProblem(run: Run, request: { api?: unknown } | undefined): string | null {
  return request?.api === undefined && run.settings.resolutionViaTemporal !== 'allow' ? TEMPORAL_PATH_DENIED : null;
}

/**
 * A24: a signed request's id is spent when the workflow accepts it, whatever comes of it, so one refused (expired, its
 * key revoked, the money policy) and sent again from the history is refused as used. True when it was spent before.
 */
function spend(run: Run, request: { api?: { requestId?: unknown } } | undefined): boolean {
  if (!request?.api) return false;
  const id = String(request.api.requestId);
  if (run.spentRequestIds.includes(id)) return true;
  run.spentRequestIds.push(id);
  return false;
}

/** R2: every refused resolution is visible in the state query; a signal's is never retried. */
export function refuse(run: Run, resolution: OperatorResolution | undefined, problem: string, via: 'signal' | 'update'): void {
  const operator = textProblem(resolution?.operator, OPERATOR_MAX) === null ? (resolution!.operator as string).trim() : null;
  run.refusedResolutions.push({ operator, problem, via });
  if (run.refusedResolutions.length > MAX_REFUSALS_KEPT) run.refusedResolutions.shift();
  log.warn('operator resolution refused', { problem, via });
}

function accept(
  run: Run,
  resolution: OperatorResolution,
  via: 'signal' | 'update',
  origin: Run['pendingOrigin'],
  spent = false,
): void {
  run.resolutionOutcome = undefined;
  run.pendingSpent = spent;
  run.pendingResolution = resolution;
  run.pendingVia = via;
  run.pendingOrigin = origin;
}

function decisionProblem(run: Run, decision: ProposalDecision): string | null {
  if (run.state !== 'manual_review' || !run.proposal) return 'no resolution is waiting for approval';
  if (typeof decision?.proposalId !== 'string' || decision.proposalId !== run.proposal.id) {
    return `proposal ${String(decision?.proposalId)} is not the one waiting (${run.proposal.id})`;
  }
  if (run.pendingDecision || run.pendingResolution) return 'another decision on this proposal is being made';
  return accessProblem(run, decision);
}

function registerDecision(run: Run, kind: 'approve' | 'cancel'): void {
  setHandler(
    kind === 'approve' ? approveResolutionUpdate : cancelResolutionUpdate,
    async (decision: ProposalDecision) => {
      spend(run, decision); // A24 (the validator refused one already spent)
      run.decisionOutcome = undefined;
      run.pendingDecision = { kind, decision, updateId: currentUpdateInfo()?.id };
      await condition(() => run.decisionOutcome !== undefined);
      const outcome = run.decisionOutcome!;
      run.decisionOutcome = undefined;
      if ('error' in outcome)
        throw ApplicationFailure.create({ type: 'ResolutionFailed', message: outcome.error, nonRetryable: true });
      return outcome as never;
    },
    {
      validator: (decision: ProposalDecision) => {
        const problem = decisionProblem(run, decision);
        if (problem) throw new Error(problem);
      },
    },
  );
}

export function registerHandlers(run: Run): void {
  setHandler(reconciliationStateQuery, (): ReconciliationProgress => ({
    state: run.state,
    reason: run.reason,
    providerQueries: run.providerQueries,
    ledgerTransactionId: run.ledgerTransactionId,
    refusedResolutions: [...run.refusedResolutions],
    proposal: run.proposal,
  }));
  // A signal cannot answer, so an invalid or late one is recorded as refused (state query); the update refuses it
  // instead. Whether Temporal's way in is allowed is decided in operatorReview (behind its patch, for old histories).
  setHandler(operatorResolutionSignal, (resolution) => {
    const signalIndex = run.signalCount++;
    const spent = spend(run, resolution); // A24: judged in operatorReview, behind its patch (old histories)
    const problem =
      resolutionProblem(resolution, run.state, run.pendingResolution !== undefined) ??
      (run.proposal ? `proposal ${run.proposal.id} is waiting for approval: approve or cancel it first` : null);
    if (problem) refuse(run, resolution, problem, 'signal');
    else accept(run, resolution, 'signal', { signalIndex }, spent);
  });
  setHandler(
    resolveUpdate,
    async (resolution) => {
      spend(run, resolution); // A24 (the validator refused one already spent)
      accept(run, resolution, 'update', { updateId: currentUpdateInfo()?.id });
      await condition(() => run.resolutionOutcome !== undefined);
      const outcome = run.resolutionOutcome!;
      if ('error' in outcome) {
        run.resolutionOutcome = undefined;
        throw ApplicationFailure.create({ type: 'ResolutionFailed', message: outcome.error, nonRetryable: true });
      }
      return outcome;
    },
    {
      validator: (resolution) => {
        const problem =
          resolutionProblem(resolution, run.state, run.pendingResolution !== undefined || run.pendingDecision !== undefined) ??
          (run.proposal ? `proposal ${run.proposal.id} is waiting for approval: approve or cancel it first` : null) ??
          accessProblem(run, resolution);
        if (problem) throw new Error(problem);
      },
    },
  );
  registerDecision(run, 'approve');
  registerDecision(run, 'cancel');
}
