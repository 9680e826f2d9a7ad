// A5: dual control. A resolution the money policy (src/ledger/money-policy.ts, A11) does not let one person
// commit is recorded as a proposal first; a second, different person approves it (then it is posted) or anyone
// cancels it.
import { and, eq, isNull } from 'drizzle-orm';
import { recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { resolutionProposals } from '../db/schema/index.js';
import type { OperatorResolution, ResolutionPrincipal, ResolutionProposal } from '../shared/inbound.js';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/** A3: who proposed, approved or cancelled, as the audit log records it. */
const auditActor = (by: ResolutionPrincipal) => ({
  keyId: by.key,
  name: by.name,
  role: by.role,
  requestId: by.requestId,
  clientRequestId: by.clientRequestId ?? null,
  via: by.via,
});
export type ProposalRow = typeof resolutionProposals.$inferSelect;

export async function openProposal(db: Db | Tx, reconciliationId: string): Promise<ProposalRow | undefined> {
  const [row] = await db
    .select()
    .from(resolutionProposals)
    .where(and(eq(resolutionProposals.reconciliationId, reconciliationId), isNull(resolutionProposals.closed)));
  return row;
}

export const proposalView = (row: ProposalRow): ResolutionProposal => ({
  id: row.id,
  decision: row.decision as OperatorResolution['decision'],
  reason: row.reason,
  ...(row.post ? { post: row.post } : {}),
  proposedBy: {
    key: row.proposedByKey,
    name: row.proposedBy,
    role: null,
    via: row.proposedVia as 'api' | 'temporal',
    requestId: row.requestId,
  },
  proposedAt: row.proposedAt.toISOString(),
});

export async function proposalById(db: Db | Tx, id: string): Promise<ProposalRow | undefined> {
  const [row] = await db.select().from(resolutionProposals).where(eq(resolutionProposals.id, id));
  return row;
}

/** Idempotent: a retried activity finds the proposal it wrote (same id). */
export async function insertProposal(
  tx: Tx,
  id: string,
  reconciliationId: string,
  resolution: OperatorResolution,
  by: ResolutionPrincipal,
): Promise<ProposalRow> {
  const inserted = await tx
    .insert(resolutionProposals)
    .values({
      id,
      reconciliationId,
      decision: resolution.decision,
      reason: resolution.reason.trim(),
      post: resolution.post ?? null,
      proposedBy: by.name,
      proposedByKey: by.key,
      proposedVia: by.via,
      requestId: by.requestId,
    })
    .onConflictDoNothing({ target: resolutionProposals.id })
    .returning({ id: resolutionProposals.id });
  const [row] = await tx.select().from(resolutionProposals).where(eq(resolutionProposals.id, id));
  if (inserted.length === 1) {
    await recordAuditEvent(tx, {
      actor: auditActor(by),
      action: 'reconciliation.propose',
      target: { type: 'reconciliation', id: reconciliationId },
      after: { proposal_id: id, decision: row!.decision, reason: row!.reason, post: row!.post },
    });
  }
  return row!;
}

/** Closes an open proposal; false when it is not open (already approved or cancelled). */
export async function closeProposal(
  db: Db | Tx,
  id: string,
  closed: 'approved' | 'cancelled',
  by: ResolutionPrincipal,
): Promise<boolean> {
  // An approval's audit row is the resolution's own (reconciliation.resolve, by the approver); a cancellation gets
  // its own, in the same transaction as the close.
  return db.transaction(async (tx) => {
    const rows = await tx
      .update(resolutionProposals)
      .set({ closed, closedBy: by.name, closedByKey: by.key, closedVia: by.via, closedAt: new Date() })
      .where(and(eq(resolutionProposals.id, id), isNull(resolutionProposals.closed)))
      .returning({ id: resolutionProposals.id, reconciliationId: resolutionProposals.reconciliationId });
    if (rows.length === 1 && closed === 'cancelled') {
      await recordAuditEvent(tx, {
        actor: auditActor(by),
        action: 'reconciliation.cancel_proposal',
        target: { type: 'reconciliation', id: rows[0]!.reconciliationId },
        before: { proposal_id: id },
        after: { proposal_id: id, closed },
      });
    }
    return rows.length === 1;
  });
}
