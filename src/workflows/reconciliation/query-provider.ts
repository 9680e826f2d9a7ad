// Phase 1, query the provider (I6–I9, I12): ask until an authoritative answer or the timeout, with the
// profile's backoff, carrying a long loop to a new run (R20: its block sealed by the worker); a confirmed answer is
// posted to the ledger.
import { continueAsNew, sleep, workflowInfo } from '@temporalio/workflow';
import { postingOutcome } from '../../inbound/posting-outcome.js';
import { judge, type Verdict } from '../../inbound/verdict.js';
import type { PostingKind } from '../../ledger/postings.js';
import type { ReconciliationWorkflowInput } from '../../shared/inbound.js';
import { failureReason, failureText, failureType, isActivityFailure } from '../../shared/failures.js';
import { provider } from './activities.js';
import { ensureAllowed, post, type ReconciliationOutcome, type Run } from './run.js';
import { sealed } from './trust.js';

/** One query: the provider's answer judged against the event; provider errors are `unknown` (retried). */
async function askProvider(run: Run): Promise<Verdict> {
  const { input } = run;
  run.providerQueries += 1;
  try {
    const answer = await provider.queryProviderPayment({
      provider: input.provider,
      paymentReference: input.event.paymentReference,
    });
    if (answer.outcome === 'error') return { kind: 'unknown', reason: `provider_error: ${answer.message}` };
    if (answer.outcome === 'found') run.providerPayment = answer.payment;
    return judge(input.event, answer.outcome === 'found' ? answer.payment : null);
  } catch (error) {
    return { kind: 'unknown', reason: `provider_error: ${failureText(error)}` };
  }
}

/** A confirmed answer is posted; the ledger may still turn it into a conflict or a wait for the capture. */
async function postConfirmed(run: Run, verdict: Verdict, postingKind: PostingKind): Promise<Verdict> {
  ensureAllowed(run, 'applied', 'system');
  try {
    const outcome = postingOutcome(await post(run, postingKind, 'system'), postingKind, run.input.event);
    if (outcome.kind !== 'posted') return outcome.verdict;
    run.ledgerTransactionId = outcome.transactionId;
    return verdict;
  } catch (error) {
    // Domain refusals of the ledger are errors a person must look at, never a silent success.
    const type = failureType(error);
    if (type === 'ReversalExceedsSettledError')
      return { kind: 'conflict', reason: `reversal_exceeds_settled: ${failureText(error)}` };
    if (type === 'LedgerConflictError') return { kind: 'conflict', reason: `ledger_conflict: ${failureText(error)}` };
    // R4: any other final failure (an amount of 0, data the database refuses) is parked, not retried.
    if (isActivityFailure(error)) return { kind: 'conflict', reason: `ledger_refused: ${failureReason(error)}` };
    throw error;
  }
}

export async function queryProvider(run: Run): Promise<Verdict> {
  const { input, postingKind, settings } = run;
  const { continued } = input;
  // I12: provisional credit exists only when the profile allows it: its own accounts, released at the end.
  let provisionalPosted = continued?.provisionalPosted ?? false;
  // The timeout runs from the acknowledgement (the time the event has waited for an answer), not from a start
  // that a loaded worker or the sweep may have delayed; every reconciliation still queries the provider once.
  const acknowledged = Date.parse(input.acknowledgedAt);
  const deadline =
    continued?.deadline ?? (Number.isFinite(acknowledged) ? Math.min(acknowledged, Date.now()) : Date.now()) + settings.timeoutMs;
  let delay = continued?.delayMs ?? settings.backoff.initialMs;
  const queriesPerRun = input.queriesPerRun ?? 500;
  let queriesThisRun = 0;
  let verdict: Verdict;
  for (;;) {
    verdict = await askProvider(run);
    run.match = verdict.kind === 'confirmed' ? verdict.match : undefined;
    if (verdict.kind === 'confirmed' && postingKind) verdict = await postConfirmed(run, verdict, postingKind);
    if (verdict.kind !== 'unknown') break;
    run.reason = verdict.reason;
    if (settings.allowProvisionalAccess && postingKind === 'payment' && !provisionalPosted) {
      try {
        await post(run, 'provisional', 'system');
        provisionalPosted = true;
      } catch (error) {
        if (!isActivityFailure(error)) throw error;
        verdict = { kind: 'conflict', reason: `ledger_refused: ${failureReason(error)}` };
        break;
      }
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      verdict = {
        kind: 'conflict',
        reason: `timeout: no authoritative answer within ${settings.timeoutMs} ms (last: ${verdict.reason})`,
      };
      break;
    }
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * settings.backoff.multiplier, settings.backoff.maximumMs);
    queriesThisRun += 1;
    // A long timeout with a short backoff cap would grow the history without bound: carry the loop to a new run.
    if (queriesThisRun >= queriesPerRun || workflowInfo().continueAsNewSuggested) {
      const { providerQueries, providerPayment } = run;
      const next = await sealed(run, { deadline, delayMs: delay, providerQueries, provisionalPosted, providerPayment });
      // R20: a sealed block goes with the ingress's fields alone (the next run takes rules and settings from its worker).
      const { provider, receiptId, event, acknowledgedAt, queriesPerRun } = input;
      await continueAsNew<(input: ReconciliationWorkflowInput) => Promise<ReconciliationOutcome>>(
        next.seal
          ? {
              provider,
              receiptId,
              event,
              acknowledgedAt,
              ...(queriesPerRun !== undefined ? { queriesPerRun } : {}),
              continued: next,
            }
          : { ...input, continued: next },
      );
    }
  }
  if (provisionalPosted) await post(run, 'provisional_release', 'system');
  return verdict;
}
