// Activities of the reconciliation workflow: query the provider, post to the ledger, record the projection and
// its transitions, write the operator-resolution audit row. Each is safe to retry. R18: the provider query and the
// ledger posting have spans of their own (children of the activity's), and the posting's outbox row keeps its context.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import type { Profile } from '../config/profile.js';
import type { Logger } from '../lib/logger.js';
import { operatorResolutions } from '../db/schema/index.js';
import { CaptureNotPostedError, LedgerConflictError } from '../ledger/errors.js';
import { buildPosting, REVERSAL_KINDS, type PostingKind } from '../ledger/postings.js';
import { postProviderObject, postTransaction, type PostedTransaction } from '../ledger/store.js';
import { createProviderAdapter, ProviderApiError } from '../providers/index.js';
import type { Discrepancy, ItemMatch } from '../inbound/verdict.js';
import {
  ackToLedgerLag,
  ledgerMutations,
  manualReviewEntered,
  reconciliationTransitions as transitionsMetric,
  terminalRejected,
} from '../metrics/inbound-ledger.js';
import { newId } from '../shared/ids.js';
import { inSpan, SpanKind } from '../tracing/context.js';
import { recordAuditEvent } from '../audit/record.js';
import { actorOfResolution } from '../inbound/resolution-store.js';
import type {
  LedgerPostingResult,
  NormalizedProviderEvent,
  OperatorResolution,
  ProviderPayment,
  ReconciliationState,
} from '../shared/inbound.js';

export type { LedgerPostingResult } from '../shared/inbound.js';

export interface ReconciliationActivityDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  fetch?: typeof fetch;
}

export interface TransitionRecord {
  reconciliationId: string;
  provider: string;
  event: NormalizedProviderEvent;
  acknowledgedAt: string;
  /** null for the first projection row (the initial state). */
  from: ReconciliationState | null;
  to: ReconciliationState;
  /** 'system' or 'operator:<name>'. */
  actor: string;
  reason: string | null;
  providerPayment?: Pick<ProviderPayment, 'amountMinor' | 'currency'> | null;
  ledgerTransactionId?: string | null;
  discrepancy?: Discrepancy | null;
}

export type ProviderQueryResult =
  | { outcome: 'found'; payment: ProviderPayment }
  | { outcome: 'not_found' }
  | { outcome: 'error'; status: number | null; message: string };

export interface LedgerPostingRequest {
  kind: PostingKind;
  provider: string;
  reconciliationId: string;
  event: NormalizedProviderEvent;
  acknowledgedAt: string;
  actor: string;
  /** L1: the provider objects a refund/chargeback/reversal may stand for (from the verdict); absent: keyed by event. */
  match?: ItemMatch;
}

export interface ResolutionRecord {
  reconciliationId: string;
  resolution: OperatorResolution;
  previousState: ReconciliationState;
  amountMinor: string;
  currency: string;
  providerAmountMinor: string | null;
  ledgerTransactionId: string | null;
}

export function createReconciliationActivities(deps: ReconciliationActivityDeps) {
  const { db, profile, logger } = deps;

  const activities = {
    /**
     * I8: the authoritative state. A provider error is an answer ("unknown"), not an activity failure (logged at debug only): the
     * workflow retries it with the profile's backoff, and a provider outage does not flood the worker log.
     */
    async queryProviderPayment(request: { provider: string; paymentReference: string }): Promise<ProviderQueryResult> {
      const config = Object.hasOwn(profile.inbound.providers, request.provider) ? profile.inbound.providers[request.provider] : undefined;
      if (!config) throw Object.assign(new Error(`provider ${request.provider} is not in the profile`), { name: 'ProviderNotConfiguredError' });
      try {
        // I15: the provider's adapter owns its payments query (built from the entry as it is now; tests repoint it).
        const payment = await createProviderAdapter(request.provider, config).queryPayment(request.paymentReference, { fetch: deps.fetch });
        return payment ? { outcome: 'found', payment } : { outcome: 'not_found' };
      } catch (error) {
        if (!(error instanceof ProviderApiError)) throw error;
        logger.debug({ provider: request.provider, status: error.status, problem: error.message }, 'provider query failed');
        return { outcome: 'error', status: error.status, message: error.message };
      }
    },

    async recordReconciliationTransition(record: TransitionRecord): Promise<void> {
      const { event } = record;
      // A21: the projection and its transition in one call; the application role cannot write a reconciliation's
      // money (the event's amount, the provider's answer) any other way (migration 0029).
      const projection = {
        id: record.reconciliationId,
        provider: record.provider,
        provider_event_id: event.providerEventId,
        event_type: event.type,
        payment_reference: event.paymentReference,
        amount_minor: BigInt(event.amountMinor).toString(),
        currency: event.currency,
        effective_at: new Date(event.effectiveAt).toISOString(),
        provider_object_id: event.providerObjectId ?? null,
        acknowledged_at: new Date(record.acknowledgedAt).toISOString(),
        state: record.to,
        reason: record.reason,
        provider_amount_minor: record.providerPayment ? BigInt(record.providerPayment.amountMinor).toString() : null,
        provider_currency: record.providerPayment?.currency ?? null,
        ledger_transaction_id: record.ledgerTransactionId ?? null,
        discrepancy: record.discrepancy ?? null,
        updated_at: new Date().toISOString(),
        from_state: record.from,
        actor: record.actor,
      };
      const [answer] = await db.execute<{ inserted: boolean }>(sql`select public.apipay_record_reconciliation(${JSON.stringify(projection)}::jsonb) as inserted`);
      const inserted = answer?.inserted === true;
      // Counted once per transition, not once per retried activity.
      if (inserted) {
        const actor = record.actor.startsWith('operator') ? 'operator' : 'system';
        transitionsMetric.inc({ to: record.to, actor });
        if (record.to === 'manual_review') manualReviewEntered.inc();
        if (record.to === 'rejected') terminalRejected.inc({ actor });
      }
    },

    /**
     * I9/I10: one posting per idempotency key; a refund before its capture answers awaiting_capture. L1: a
     * refund, chargeback or reversal posts one provider object (claimed under the payment's lock); an object or
     * capture already posted by another event is a duplicate.
     */
    async postLedgerTransaction(request: LedgerPostingRequest): Promise<LedgerPostingResult> {
      const { event } = request;
      const posting = (providerObjectId?: string) =>
        buildPosting({
          kind: request.kind,
          provider: request.provider,
          providerEventId: event.providerEventId,
          providerObjectId,
          paymentReference: event.paymentReference,
          amountMinor: event.amountMinor,
          currency: event.currency,
        });
      const meta = {
        providerEventId: event.providerEventId,
        reconciliationId: request.reconciliationId,
        effectiveAt: event.effectiveAt,
        actor: request.actor,
        description: `${event.type} ${event.paymentReference}`,
      };
      try {
        let result: PostedTransaction;
        let providerObjectId: string | undefined;
        if (request.match && REVERSAL_KINDS.includes(request.kind)) {
          const outcome = await postProviderObject(db, { candidates: request.match.candidates, matchedBy: request.match.matchedBy, posting }, { ...meta, providerObjectId: request.match.candidates[0], matchedBy: request.match.matchedBy });
          if (outcome.outcome === 'duplicate') {
            ledgerMutations.inc({ kind: request.kind, result: 'duplicate' });
            return { status: 'duplicate', transactionId: outcome.transactionId, providerEventId: outcome.providerEventId, providerObjectId: outcome.providerObjectId };
          }
          if (outcome.outcome === 'no_unclaimed_item') return { status: 'no_unclaimed_item', claimed: outcome.claimed };
          result = outcome;
          providerObjectId = outcome.providerObjectId;
        } else {
          result = await postTransaction(db, posting(), meta);
          if (result.replayed && result.providerEventId !== event.providerEventId) {
            ledgerMutations.inc({ kind: request.kind, result: 'duplicate' });
            return { status: 'duplicate', transactionId: result.transactionId, providerEventId: result.providerEventId };
          }
        }
        ledgerMutations.inc({ kind: request.kind, result: result.replayed ? 'replayed' : 'posted' });
        if (!result.replayed) {
          ackToLedgerLag.observe({ kind: request.kind }, Math.max(0, (result.postedAt.getTime() - Date.parse(request.acknowledgedAt)) / 1000));
        }
        return {
          status: result.replayed ? 'replayed' : 'posted',
          transactionId: result.transactionId,
          postedAt: result.postedAt.toISOString(),
          providerEventId: result.providerEventId,
          ...(providerObjectId ? { providerObjectId } : {}),
        };
      } catch (error) {
        if (error instanceof CaptureNotPostedError) {
          ledgerMutations.inc({ kind: request.kind, result: 'awaiting_capture' });
          return { status: 'awaiting_capture' };
        }
        if (error instanceof LedgerConflictError) {
          ledgerMutations.inc({ kind: request.kind, result: 'conflict' });
          logger.error({ idempotencyKey: error.idempotencyKey, existing: error.existingTransactionId }, 'ledger conflict');
        }
        throw error;
      }
    },

    /** I11: exactly one immutable audit row per reconciliation; a retry returns the row already written. */
    async recordOperatorResolution(record: ResolutionRecord): Promise<{ auditId: string }> {
      const { resolution: r, reconciliationId } = record;
      // A3 on the legacy path too: the audit log's row with the resolution's, once.
      const [row] = await db.transaction(async (tx) => {
        const inserted = await tx
          .insert(operatorResolutions)
          .values({
            id: newId('opr'),
            reconciliationId: record.reconciliationId,
            decision: record.resolution.decision,
            operator: record.resolution.operator,
            reason: record.resolution.reason,
            previousState: record.previousState,
            amountMinor: BigInt(record.amountMinor),
            currency: record.currency,
            providerAmountMinor: record.providerAmountMinor === null ? null : BigInt(record.providerAmountMinor),
            ledgerTransactionId: record.ledgerTransactionId,
          })
          .onConflictDoNothing({ target: operatorResolutions.reconciliationId })
          .returning({ id: operatorResolutions.id });
        const [first] = inserted;
        if (first) {
          const after = { state: r.decision === 'rejected' ? 'rejected' : 'applied', decision: r.decision, reason: r.reason, resolution_id: first.id, ledger_transaction_id: record.ledgerTransactionId };
          await recordAuditEvent(tx, { actor: actorOfResolution(r, r.operator), action: 'reconciliation.resolve', target: { type: 'reconciliation', id: reconciliationId }, before: { state: record.previousState }, after });
        }
        return inserted;
      });
      if (row) return { auditId: row.id };
      const [existing] = await db.select({ id: operatorResolutions.id }).from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, record.reconciliationId));
      return { auditId: existing!.id };
    },
  };
  const { queryProviderPayment, postLedgerTransaction } = activities;
  activities.queryProviderPayment = (request) =>
    inSpan('provider.query', { kind: SpanKind.CLIENT, attributes: { 'apipay.provider': request.provider } }, () => queryProviderPayment(request));
  activities.postLedgerTransaction = (request) =>
    inSpan('ledger.post', { attributes: { 'apipay.provider': request.provider, 'apipay.posting_kind': request.kind, 'apipay.reconciliation_id': request.reconciliationId } }, () => postLedgerTransaction(request));
  return activities;
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
