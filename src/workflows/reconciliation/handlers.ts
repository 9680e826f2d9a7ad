// The operator's ways in (I11, R2): the state query, the resolution signal (cannot answer, so a refusal is
// recorded) and the resolve update (validated, answered with the outcome or refused).
import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import {
  operatorResolutionSignal,
  reconciliationStateQuery,
  resolveUpdate,
  type OperatorResolution,
  type ReconciliationProgress,
  type ReconciliationState,
} from '../../shared/inbound.js';
import { OPERATOR_MAX, resolutionInputProblem, textProblem } from '../../shared/operator-input.js';
import type { Run } from './run.js';

const MAX_REFUSALS_KEPT = 20;

function resolutionProblem(resolution: OperatorResolution, state: ReconciliationState, pending: boolean): string | null {
  if (state !== 'manual_review') return `not in manual_review (state ${state})`;
  if (pending) return 'already resolved';
  return resolutionInputProblem(resolution);
}

/** R2: every refused resolution is visible in the state query; a signal's is never retried. */
export function refuse(run: Run, resolution: OperatorResolution | undefined, problem: string, via: 'signal' | 'update'): void {
  const operator = textProblem(resolution?.operator, OPERATOR_MAX) === null ? (resolution!.operator as string).trim() : null;
  run.refusedResolutions.push({ operator, problem, via });
  if (run.refusedResolutions.length > MAX_REFUSALS_KEPT) run.refusedResolutions.shift();
  log.warn('operator resolution refused', { problem, via });
}

function accept(run: Run, resolution: OperatorResolution, via: 'signal' | 'update'): void {
  run.resolutionOutcome = undefined;
  run.pendingResolution = resolution;
  run.pendingVia = via;
}

export function registerHandlers(run: Run): void {
  setHandler(reconciliationStateQuery, (): ReconciliationProgress => ({
    state: run.state,
    reason: run.reason,
    providerQueries: run.providerQueries,
    ledgerTransactionId: run.ledgerTransactionId,
    refusedResolutions: [...run.refusedResolutions],
  }));
  // A signal cannot answer, so an invalid or late one is recorded as refused (state query); the update refuses it instead.
  setHandler(operatorResolutionSignal, (resolution) => {
    const problem = resolutionProblem(resolution, run.state, run.pendingResolution !== undefined);
    if (problem) refuse(run, resolution, problem, 'signal');
    else accept(run, resolution, 'signal');
  });
  setHandler(
    resolveUpdate,
    async (resolution) => {
      accept(run, resolution, 'update');
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
        const problem = resolutionProblem(resolution, run.state, run.pendingResolution !== undefined);
        if (problem) throw new Error(problem);
      },
    },
  );
}
