// A5 dual control (migration 0011): resolutions and ledger adjustments above the profile's amount wait here for a
// second principal; each row is closed (approved or cancelled) once and never deleted. A27 (migration 0032): the first
// of the two IdP approvals a proposal by a non-person needs.
import { bigint, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import type { ResolutionPost } from '../../shared/inbound.js';
import { reconciliations } from './inbound.js';

/** A5 (migration 0011): a resolution above the dual-control amount, waiting for a second principal; closed once. */
export const resolutionProposals = pgTable(
  'resolution_proposals',
  {
    id: text('id').primaryKey(), // rpr_…
    reconciliationId: text('reconciliation_id')
      .notNull()
      .references(() => reconciliations.id),
    decision: text('decision').notNull(),
    reason: text('reason').notNull(),
    post: jsonb('post').$type<ResolutionPost>(),
    proposedBy: text('proposed_by').notNull(),
    proposedByKey: text('proposed_by_key').notNull(),
    proposedVia: text('proposed_via').notNull(),
    requestId: text('request_id'),
    proposedAt: timestamp('proposed_at', { withTimezone: true }).notNull().defaultNow(),
    /** approved | cancelled, with who and when; null while it waits. */
    closed: text('closed'),
    closedBy: text('closed_by'),
    closedByKey: text('closed_by_key'),
    closedVia: text('closed_via'),
    closedAt: timestamp('closed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('resolution_proposals_open_uq')
      .on(t.reconciliationId)
      .where(sql`closed IS NULL`),
    index('resolution_proposals_reconciliation_idx').on(t.reconciliationId),
  ],
);

/** A5 for L3 (migration 0011): an adjustment above the dual-control amount, waiting for a second principal. */
export const adjustmentProposals = pgTable(
  'adjustment_proposals',
  {
    id: text('id').primaryKey(), // adp_…
    provider: text('provider').notNull(),
    paymentReference: text('payment_reference').notNull(),
    amountMinor: bigint('amount_minor', { mode: 'bigint' }).notNull(),
    currency: text('currency').notNull(),
    operator: text('operator').notNull(),
    reason: text('reason').notNull(),
    reconciliationId: text('reconciliation_id'),
    idempotencyKey: text('idempotency_key'),
    proposedByKey: text('proposed_by_key').notNull(),
    proposedAt: timestamp('proposed_at', { withTimezone: true }).notNull().defaultNow(),
    closed: text('closed'),
    closedBy: text('closed_by'),
    closedByKey: text('closed_by_key'),
    closedAt: timestamp('closed_at', { withTimezone: true }),
    adjustmentId: text('adjustment_id'),
  },
  (t) => [index('adjustment_proposals_payment_idx').on(t.provider, t.paymentReference)],
);

/** A27 (migration 0032): an IdP subject's approval of a proposal (rpr_… or adp_…) that needs two; append-only. */
export const proposalApprovals = pgTable(
  'proposal_approvals',
  {
    proposalId: text('proposal_id').notNull(),
    approverKey: text('approver_key').notNull(), // idp:<sub>@<issuer>
    approverName: text('approver_name').notNull(),
    requestId: text('request_id'),
    approvedAt: timestamp('approved_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'proposal_approvals_pk', columns: [t.proposalId, t.approverKey] })],
);
