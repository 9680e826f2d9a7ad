// Inbound tables (requirements §3): the immutable provider-event registry, receipts, reconciliations with their
// transition trail, operator resolutions (immutable audit) and the append-only double-entry ledger.
import {
  bigint,
  bigserial,
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { bytea } from './outbound.js';
import type { Discrepancy } from '../../shared/inbound.js';

/**
 * I5: every provider event id ever accepted. Insert-only: a trigger (migration 0001) refuses UPDATE and DELETE,
 * and the application role is granted INSERT and SELECT only. Kept at least as long as ledger and audit rows.
 */
export const providerEventRegistry = pgTable(
  'provider_event_registry',
  {
    provider: text('provider').notNull(),
    providerEventId: text('provider_event_id').notNull(),
    registeredAt: timestamp('registered_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.providerEventId] })],
);

/** I2/I4: the raw bytes as received, with the headers verification needs, so verification can be replayed. */
export const webhookReceipts = pgTable(
  'webhook_receipts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: text('provider').notNull(),
    providerEventId: text('provider_event_id').notNull(),
    rawBody: bytea('raw_body').notNull(),
    headers: jsonb('headers').$type<Record<string, string>>().notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /** I6: set once the reconciliation workflow is known to exist; the sweep starts rows where it is null. */
    workflowStartedAt: timestamp('workflow_started_at', { withTimezone: true }),
    /** R18: the ingress request's W3C traceparent, so a reconciliation the sweep starts joins its trace. */
    traceparent: text('traceparent'),
  },
  (t) => [
    uniqueIndex('webhook_receipts_event_uq').on(t.provider, t.providerEventId),
    index('webhook_receipts_unstarted_idx').on(t.receivedAt).where(sql`workflow_started_at IS NULL`),
  ],
);

/** Projection of each reconciliation workflow's state, written by its activities, for the admin API. */
export const reconciliations = pgTable(
  'reconciliations',
  {
    id: text('id').primaryKey(), // the workflow id: reconcile:<provider>:<event id>
    provider: text('provider').notNull(),
    providerEventId: text('provider_event_id').notNull(),
    eventType: text('event_type').notNull(),
    paymentReference: text('payment_reference').notNull(),
    amountMinor: bigint('amount_minor', { mode: 'bigint' }).notNull(),
    currency: text('currency').notNull(),
    effectiveAt: timestamp('effective_at', { withTimezone: true }).notNull(),
    state: text('state').notNull(),
    reason: text('reason'),
    providerAmountMinor: bigint('provider_amount_minor', { mode: 'bigint' }),
    providerCurrency: text('provider_currency'),
    ledgerTransactionId: text('ledger_transaction_id'),
    /** L1: the provider's id of the refund, dispute or reversal the event is about, when it carries one. */
    providerObjectId: text('provider_object_id'),
    /** L5: posted and reported state side by side, when the provider contradicts a settled payment. */
    discrepancy: jsonb('discrepancy').$type<Discrepancy>(),
    acknowledgedAt: timestamp('acknowledged_at', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('reconciliations_event_uq').on(t.provider, t.providerEventId),
    index('reconciliations_state_idx').on(t.state, t.id),
    index('reconciliations_payment_idx').on(t.paymentReference),
  ],
);

/** The audit trail of every state change of a reconciliation (who: system or an operator). */
export const reconciliationTransitions = pgTable(
  'reconciliation_transitions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    reconciliationId: text('reconciliation_id').notNull().references(() => reconciliations.id),
    fromState: text('from_state').notNull(),
    toState: text('to_state').notNull(),
    actor: text('actor').notNull(),
    reason: text('reason'),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('reconciliation_transitions_uq').on(t.reconciliationId, t.fromState, t.toState)],
);

/** I11: one immutable record per operator resolution (a trigger refuses UPDATE and DELETE). */
export const operatorResolutions = pgTable(
  'operator_resolutions',
  {
    id: text('id').primaryKey(), // opr_…
    reconciliationId: text('reconciliation_id').notNull().references(() => reconciliations.id),
    decision: text('decision').notNull(),
    operator: text('operator').notNull(),
    reason: text('reason').notNull(),
    previousState: text('previous_state').notNull(),
    amountMinor: bigint('amount_minor', { mode: 'bigint' }).notNull(),
    currency: text('currency').notNull(),
    providerAmountMinor: bigint('provider_amount_minor', { mode: 'bigint' }),
    /** L2 (migration 0008): the provider's currency beside its amount (null on older rows: see the reconciliation). */
    providerCurrency: text('provider_currency'),
    /** L2: what `applied` asked to post (provider | webhook | explicit) and the amount it stood for. */
    postBasis: text('post_basis'),
    postedAmountMinor: bigint('posted_amount_minor', { mode: 'bigint' }),
    postedCurrency: text('posted_currency'),
    /** L4: the transaction this resolution posted, or null (rejected, acknowledged, or already in the ledger). */
    ledgerTransactionId: text('ledger_transaction_id'),
    resolvedAt: timestamp('resolved_at', { withTimezone: true }).notNull().defaultNow(),
    /** A4 (migration 0011): the principal's key id (apk_…, bootstrap) or temporal:<identity>; null on older rows. */
    operatorKey: text('operator_key'),
    /** A4: api (the admin API's signed request) or temporal (an update or signal sent to Temporal directly). */
    via: text('via'),
    /** A5: the proposal this resolution was approved from (dual control), its time, and who approved it. */
    proposalId: text('proposal_id'),
    proposedAt: timestamp('proposed_at', { withTimezone: true }),
    approvedBy: text('approved_by'),
    approvedByKey: text('approved_by_key'),
    approvedAt: timestamp('approved_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('operator_resolutions_once_uq').on(t.reconciliationId),
    check('operator_resolutions_decision_ck', sql`${t.decision} in ('applied', 'rejected', 'acknowledged')`),
  ],
);

/** L3: an operator's correcting transaction against a payment; immutable, written with its ledger transaction. */
export const ledgerAdjustments = pgTable(
  'ledger_adjustments',
  {
    id: text('id').primaryKey(), // adj_…
    provider: text('provider').notNull(),
    paymentReference: text('payment_reference').notNull(),
    /** Signed minor units: > 0 adds to what is settled on the payment, < 0 gives back. */
    amountMinor: bigint('amount_minor', { mode: 'bigint' }).notNull(),
    currency: text('currency').notNull(),
    operator: text('operator').notNull(),
    reason: text('reason').notNull(),
    /** The review item it settles, if any. */
    reconciliationId: text('reconciliation_id').references(() => reconciliations.id),
    ledgerTransactionId: text('ledger_transaction_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** A5 (migration 0011): the proposer's key; under dual control the proposal and who approved it, when. */
    operatorKey: text('operator_key'),
    proposalId: text('proposal_id'),
    approvedBy: text('approved_by'),
    approvedByKey: text('approved_by_key'),
    approvedAt: timestamp('approved_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('ledger_adjustments_transaction_uq').on(t.ledgerTransactionId),
    index('ledger_adjustments_payment_idx').on(t.provider, t.paymentReference),
    check('ledger_adjustments_nonzero_ck', sql`${t.amountMinor} <> 0`),
  ],
);

/** I9: append-only; one row per posting, found again by its idempotency key. */
export const ledgerTransactions = pgTable(
  'ledger_transactions',
  {
    id: text('id').primaryKey(), // ltx_…
    idempotencyKey: text('idempotency_key').notNull(),
    /** sha256 of the canonical posting: the same key with other content is a conflict, not a success. */
    contentHash: text('content_hash').notNull(),
    kind: text('kind').notNull(), // payment | refund | chargeback | reversal
    paymentReference: text('payment_reference').notNull(),
    effectiveAt: timestamp('effective_at', { withTimezone: true }).notNull(),
    description: text('description'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    postedAt: timestamp('posted_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('ledger_transactions_idempotency_uq').on(t.idempotencyKey),
    index('ledger_transactions_payment_idx').on(t.paymentReference, t.effectiveAt),
  ],
);

/** Double entry: signed minor units (debit > 0, credit < 0); a deferred trigger checks each transaction sums to 0. */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    transactionId: text('transaction_id').notNull().references(() => ledgerTransactions.id),
    account: text('account').notNull(),
    amountMinor: bigint('amount_minor', { mode: 'bigint' }).notNull(),
    currency: text('currency').notNull(),
  },
  (t) => [
    index('ledger_entries_account_idx').on(t.account, t.currency),
    index('ledger_entries_transaction_idx').on(t.transactionId),
    check('ledger_entries_nonzero_ck', sql`${t.amountMinor} <> 0`),
  ],
);
