// A5 for L3: an adjustment above the profile's dual-control amount (inbound.dual_control_above, by the absolute
// amount in its currency) is stored as a proposal and posted only when a second, different principal approves it;
// the proposer or anyone else may cancel it. The approval posts and closes the proposal in one transaction.
import { and, count, eq, isNull } from 'drizzle-orm';
import { isIdpKey } from '../access/idp-tokens.js';
import { idpApprovalVerdict, recordFirstApproval, twoPeopleProblem } from '../access/people.js';
import { recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { adjustmentProposals } from '../db/schema/index.js';
import type { AuditActor } from '../shared/audit.js';
import { newId } from '../shared/ids.js';
import { OPERATOR_MAX, REASON_MAX, textProblem } from '../shared/operator-input.js';
import { AdjustmentRefusedError, postAdjustment, type AdjustmentInput } from './adjustments.js';

export type AdjustmentProposalRow = typeof adjustmentProposals.$inferSelect;
/** The principal acting: its key id (apk_…, bootstrap) and name; the approver's audit actor (A3). */
export interface Actor {
  keyId: string;
  name: string;
  audit?: AuditActor;
}

/** A3: the principal as the audit log records it (the API passes the full actor; bare callers get role null). */
const actorFor = (by: Actor): AuditActor =>
  by.audit ?? { keyId: by.keyId, name: by.name, role: null, requestId: null, via: 'api' };

export class SelfApprovalError extends Error {
  override name = 'AdjustmentSelfApprovalError';
}

export async function proposeAdjustment(db: Db, input: AdjustmentInput, by: Actor): Promise<AdjustmentProposalRow> {
  for (const [field, max] of [
    ['operator', OPERATOR_MAX],
    ['reason', REASON_MAX],
  ] as const) {
    const problem = textProblem(input[field], max);
    if (problem) throw new AdjustmentRefusedError('validation_failed', `${field}: ${problem}`);
  }
  const [row] = await db.transaction(async (tx) => {
    const rows = await tx
      .insert(adjustmentProposals)
      .values({
        id: newId('adp'),
        provider: input.provider,
        paymentReference: input.paymentReference,
        amountMinor: BigInt(input.amountMinor),
        currency: input.currency,
        operator: input.operator.trim(),
        reason: input.reason.trim(),
        reconciliationId: input.reconciliationId ?? null,
        idempotencyKey: input.idempotencyKey ?? null,
        proposedByKey: by.keyId,
      })
      .returning();
    await recordAuditEvent(tx, {
      actor: actorFor(by),
      action: 'ledger_adjustment.propose',
      target: { type: 'adjustment_proposal', id: rows[0]!.id },
      after: rows[0]!,
    });
    return rows;
  });
  return row!;
}

async function openOne(db: Db, id: string): Promise<AdjustmentProposalRow> {
  const [row] = await db.select().from(adjustmentProposals).where(eq(adjustmentProposals.id, id));
  if (!row) throw new AdjustmentRefusedError('not_found', `adjustment proposal ${id} does not exist`);
  if (row.closed) throw new AdjustmentRefusedError('conflict', `adjustment proposal ${id} is already ${row.closed}`);
  return row;
}

/**
 * A27: the first of the two IdP approvals a proposal by no person needs: recorded with its audit row, not posted.
 * Idempotent (a repeated request finds its row and writes nothing new).
 */
async function firstApproval(db: Db, proposal: AdjustmentProposalRow, by: Actor) {
  await db.transaction(async (tx) => {
    const wrote = await recordFirstApproval(tx, proposal.id, {
      key: by.keyId,
      name: by.name,
      requestId: by.audit?.requestId ?? null,
    });
    if (wrote) {
      await recordAuditEvent(tx, {
        actor: actorFor(by),
        action: 'ledger_adjustment.first_approval',
        target: { type: 'adjustment_proposal', id: proposal.id },
        after: { proposal_id: proposal.id, approvals: 1, needed: 2 },
      });
    }
  });
  return { awaiting: proposal };
}

/** A second principal approves: the adjustment is posted as proposed, and the proposal closed with it. */
export async function approveAdjustment(db: Db, id: string, by: Actor) {
  const proposal = await openOne(db, id);
  if (proposal.proposedByKey === by.keyId) {
    throw new SelfApprovalError(`dual control: you proposed ${id}; a second principal must approve it (or cancel it)`);
  }
  if (isIdpKey(by.keyId)) {
    // A27: an IdP subject; a proposal by no person (an API key) needs two of them.
    const verdict = await idpApprovalVerdict(db, id, proposal.proposedByKey, by.keyId);
    if (verdict.kind === 'refused') throw new SelfApprovalError(verdict.problem);
    if (verdict.kind === 'first_of_two') return firstApproval(db, proposal, by);
  }
  const problem = await twoPeopleProblem(db, proposal.proposedByKey, by.keyId, id); // A12: two people, not two keys
  if (problem) throw new SelfApprovalError(problem);
  const input: AdjustmentInput = {
    provider: proposal.provider,
    paymentReference: proposal.paymentReference,
    amountMinor: proposal.amountMinor.toString(),
    currency: proposal.currency,
    operator: proposal.operator,
    reason: proposal.reason,
    ...(proposal.reconciliationId ? { reconciliationId: proposal.reconciliationId } : {}),
    ...(proposal.idempotencyKey ? { idempotencyKey: proposal.idempotencyKey } : {}),
    // A3: the posting is the approver's act; the proposer is on the adjustment row (operator, operator_key).
    actor: by.audit ?? { keyId: by.keyId, name: by.name, role: null, requestId: null, via: 'api' },
  };
  return postAdjustment(db, input, {
    operatorKey: proposal.proposedByKey,
    approval: {
      proposalId: id,
      approvedBy: by.name,
      approvedByKey: by.keyId,
      close: async (tx, adjustmentId) => {
        const closed = await tx
          .update(adjustmentProposals)
          .set({ closed: 'approved', closedBy: by.name, closedByKey: by.keyId, closedAt: new Date(), adjustmentId })
          .where(and(eq(adjustmentProposals.id, id), isNull(adjustmentProposals.closed)))
          .returning({ id: adjustmentProposals.id });
        if (closed.length !== 1) throw new AdjustmentRefusedError('conflict', `adjustment proposal ${id} was decided meanwhile`);
      },
    },
  });
}

export async function cancelAdjustment(db: Db, id: string, by: Actor): Promise<AdjustmentProposalRow> {
  const before = await openOne(db, id);
  const row = await db.transaction(async (tx) => {
    const [closed] = await tx
      .update(adjustmentProposals)
      .set({ closed: 'cancelled', closedBy: by.name, closedByKey: by.keyId, closedAt: new Date() })
      .where(and(eq(adjustmentProposals.id, id), isNull(adjustmentProposals.closed)))
      .returning();
    if (closed) {
      await recordAuditEvent(tx, {
        actor: actorFor(by),
        action: 'ledger_adjustment.cancel',
        target: { type: 'adjustment_proposal', id },
        before,
        after: closed,
      });
    }
    return closed;
  });
  if (!row) throw new AdjustmentRefusedError('conflict', `adjustment proposal ${id} was decided meanwhile`);
  return row;
}

export async function openAdjustmentProposals(
  db: Db,
  provider: string,
  paymentReference: string,
): Promise<AdjustmentProposalRow[]> {
  return db
    .select()
    .from(adjustmentProposals)
    .where(
      and(
        eq(adjustmentProposals.provider, provider),
        eq(adjustmentProposals.paymentReference, paymentReference),
        isNull(adjustmentProposals.closed),
      ),
    )
    .orderBy(adjustmentProposals.proposedAt);
}

/**
 * A30: the proposals still waiting, oldest first (the console's queue), at most `limit`, with how many wait in all;
 * `payment` narrows both to one payment reference (an operator looking for the one a colleague proposed).
 */
export async function waitingAdjustmentProposals(
  db: Db,
  limit: number,
  payment?: string,
): Promise<{ rows: AdjustmentProposalRow[]; total: number }> {
  const where = and(isNull(adjustmentProposals.closed), payment ? eq(adjustmentProposals.paymentReference, payment) : undefined);
  const [rows, counted] = await Promise.all([
    db
      .select()
      .from(adjustmentProposals)
      .where(where)
      .orderBy(adjustmentProposals.proposedAt, adjustmentProposals.id)
      .limit(limit),
    db.select({ n: count() }).from(adjustmentProposals).where(where),
  ]);
  return { rows, total: counted[0]?.n ?? 0 };
}

/** One proposal, open or closed (undefined: no such id). */
export async function adjustmentProposal(db: Db, id: string): Promise<AdjustmentProposalRow | undefined> {
  const [row] = await db.select().from(adjustmentProposals).where(eq(adjustmentProposals.id, id));
  return row;
}
