// R2: an operator resolution is one PostgreSQL transaction: the ledger posting (L2 amounts), the immutable
// audit row and the state transition commit together or not at all. A retry after a lost completion finds the
// row it wrote and answers the same. Refusals are answers, not errors, so nothing retries them. A3: the audit
// log's row goes into the same transaction, with the actor the admin API passed in the resolution.
// The command and its answers are in ./resolution-command.ts, the refusals in ./resolution-refusal.ts.
import { eq, sql } from 'drizzle-orm';
import { twoPeopleProblem } from '../access/people.js';
import { recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';
import { operatorResolutions, reconciliations, reconciliationTransitions } from '../db/schema/index.js';
import { buildPosting } from '../ledger/postings.js';
import { correctSettlementWithin } from '../ledger/settlement-correction.js';
import { postWithin } from '../ledger/store.js';
import { newId } from '../shared/ids.js';
import type { OperatorResolution, ResolutionPrincipal } from '../shared/inbound.js';
import { closeProposal, insertProposal, openProposal, proposalView } from './dual-control.js';
import { moneyVerdict, type Amount } from '../ledger/money-policy.js';
import { resolutionInputProblem } from '../shared/operator-input.js';
import { resolutionAmount } from './resolution-amount.js';
import { actorOfResolution, stateFor, type ResolutionCommand, type ResolutionCommit, type ResolvedAccess } from './resolution-command.js';
import { Refused, refusalOf } from './resolution-refusal.js';

export { actorOfResolution, stateFor, type ResolutionCommand, type ResolutionCommit, type ResolvedAccess } from './resolution-command.js';

export async function commitResolution(db: Db, command: ResolutionCommand, access?: ResolvedAccess): Promise<ResolutionCommit> {
  const { reconciliationId, event } = command;
  let resolution = command.resolution;
  const problem = resolutionInputProblem(resolution);
  if (problem) return { status: 'refused', problem };
  try {
    return await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`resolution:${reconciliationId}`}, 0))`);
      const [existing] = await tx.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, reconciliationId));
      if (existing) {
        return { status: 'committed', state: stateFor(existing.decision as OperatorResolution['decision']), auditId: existing.id, ledgerTransactionId: existing.ledgerTransactionId, replayed: true, note: null };
      }
      const [row] = await tx.select({ state: reconciliations.state }).from(reconciliations).where(eq(reconciliations.id, reconciliationId)).for('update');
      if (!row) throw new Refused(`reconciliation ${reconciliationId} has no projection row`);
      if (row.state !== 'manual_review') throw new Refused(`not in manual_review (state ${row.state})`);
      // A4: the principal the request was attributed to; A5: an approval commits the proposal as it was proposed.
      let by: ResolutionPrincipal | null = access?.principal ?? null;
      let approval: { proposalId: string; proposedAt: Date; approver: ResolutionPrincipal } | null = null;
      const open = access ? await openProposal(tx, reconciliationId) : undefined;
      if (access?.approves) {
        if (!open || open.id !== access.approves) throw new Refused(`proposal ${access.approves} is not waiting for approval`);
        if (open.proposedByKey === access.principal.key) {
          throw new Refused(`dual control: ${open.proposedBy} proposed this resolution and cannot approve it; a second principal must`);
        }
        // A12: two different people (not sibling keys, not the bootstrap token); A14: whoever a Temporal client says
        // it is, it is not a person, so two Temporal identities are never two people.
        const notTwo =
          access.principal.via !== 'api'
            ? 'dual control: a proposal is approved by a person signed in to the admin API or the console, never through Temporal'
            : await twoPeopleProblem(tx, open.proposedByKey, access.principal.key, open.id);
        if (notTwo) throw new Refused(notTwo);
        const view = proposalView(open);
        resolution = { decision: view.decision, operator: view.proposedBy.name, reason: view.reason, ...(view.post ? { post: view.post } : {}) };
        by = view.proposedBy;
        approval = { proposalId: open.id, proposedAt: open.proposedAt, approver: access.principal };
      } else if (open) throw new Refused(`proposal ${open.id} is waiting for approval: approve or cancel it first`);
      // A2/A4: the verified principal names the resolution (the signed key's name, or the Temporal identity).
      const operator = by?.name ?? resolution.operator.trim();
      const reason = resolution.reason.trim();
      const actor = `operator:${operator}`;
      const to = stateFor(resolution.decision);
      const posts = resolution.decision === 'applied' && command.postingKind !== null && !command.discrepancy;
      const atStake = [{ amountMinor: event.amountMinor, currency: event.currency }, command.providerPayment];
      const propose = async () =>
        ({ status: 'proposed', proposal: proposalView(await insertProposal(tx, access!.proposalId, reconciliationId, resolution, { ...by!, name: operator })) }) as const;
      // A11: the one money policy judges what the decision is about and what it posts; above a limit it is only
      // proposed (A5), and a posting in another currency without a reason is refused.
      const judged = async (amount: (Amount & { basis?: string }) | null) => {
        const explicit = typeof resolution.post === 'object' ? resolution.post : undefined;
        const verdict = await moneyVerdict(tx, access!.limits, {
          provider: command.provider,
          paymentReference: event.paymentReference,
          // The payment's currency binds an amount the operator states; the provider's or webhook's is the payment's own.
          paymentCurrency: amount && amount.basis !== 'explicit' ? amount.currency : (command.providerPayment?.currency ?? event.currency),
          posts: amount ? { amountMinor: amount.amountMinor, currency: amount.currency } : null,
          about: atStake,
          currencyReason: explicit?.currencyReason,
          operatorKeys: access!.personKeys ?? [by?.key ?? access!.principal.key],
        });
        if (verdict.kind === 'refused') throw new Refused(`cannot apply: ${verdict.problem}`);
        return verdict.kind === 'dual_control';
      };
      if (access && !approval && !posts && (await judged(null))) return propose();

      const auditId = newId('opr');
      let posted: { basis: string; amountMinor: string; currency: string } | null = null;
      let ledgerTransactionId: string | null = null;
      let note: string | null = null;
      const description = `${event.type} ${event.paymentReference} (operator resolution ${auditId})`;
      if (resolution.decision === 'applied' && command.discrepancy) {
        // L5: applying a discrepancy after settlement gives back what the provider no longer reports (or nothing).
        const corrected = await correctSettlementWithin(
          tx,
          { provider: command.provider, paymentReference: event.paymentReference, reconciliationId, providerEventId: event.providerEventId, discrepancy: command.discrepancy },
          { actor, description: `settlement correction ${event.paymentReference} (operator resolution ${auditId})`, resolutionId: auditId },
        );
        if (corrected) posted = { basis: 'provider', amountMinor: corrected.amountMinor, currency: corrected.currency };
        if (corrected && !corrected.replayed) ledgerTransactionId = corrected.transactionId;
        else if (!corrected) note = 'the ledger already holds no more than the provider reports: nothing posted';
      } else if (resolution.decision === 'applied' && command.postingKind) {
        const amount = resolutionAmount(command.postingKind, event, command.providerPayment, resolution.post);
        if (!amount.ok) throw new Refused(`cannot apply: ${amount.problem}`);
        posted = amount;
        if (access && !approval && (await judged(amount))) return propose();
        const posting = buildPosting({
          kind: command.postingKind,
          provider: command.provider,
          providerEventId: event.providerEventId,
          providerObjectId: amount.providerObjectId,
          paymentReference: event.paymentReference,
          amountMinor: amount.amountMinor,
          currency: amount.currency,
        });
        const result = await postWithin(tx, posting, {
          providerEventId: event.providerEventId,
          reconciliationId,
          effectiveAt: event.effectiveAt,
          actor,
          description,
          resolutionId: auditId,
          ...(amount.providerObjectId ? { providerObjectId: amount.providerObjectId, matchedBy: amount.matchedBy } : {}),
        });
        // L4: cite only what this resolution posted; the same content already in the ledger is named, not cited.
        if (result.replayed) note = `already in the ledger as ${result.transactionId}: nothing new posted`;
        else ledgerTransactionId = result.transactionId;
      }
      await tx.insert(operatorResolutions).values({
        id: auditId,
        reconciliationId,
        decision: resolution.decision,
        operator,
        reason,
        previousState: command.previousState,
        amountMinor: BigInt(event.amountMinor),
        currency: event.currency,
        providerAmountMinor: command.providerPayment ? BigInt(command.providerPayment.amountMinor) : null,
        providerCurrency: command.providerPayment?.currency ?? null,
        postBasis: posted?.basis ?? null,
        postedAmountMinor: posted ? BigInt(posted.amountMinor) : null,
        postedCurrency: posted?.currency ?? null,
        ledgerTransactionId,
        ...(by ? { operatorKey: by.key, via: by.via } : {}),
        ...(approval
          ? { proposalId: approval.proposalId, proposedAt: approval.proposedAt, approvedBy: approval.approver.name, approvedByKey: approval.approver.key, approvedAt: new Date() }
          : {}),
      });
      if (approval && !(await closeProposal(tx, approval.proposalId, 'approved', approval.approver))) {
        throw new Refused(`proposal ${approval.proposalId} is no longer waiting for approval`);
      }
      const approved = approval ? ` (dual control: proposed by ${operator}, approved by ${approval.approver.name})` : '';
      const why = `${note ? `${reason} (${note})` : reason}${approved}`;
      const actingAs = approval?.approver ?? by;
      const auditActor = actingAs
        ? { keyId: actingAs.key, name: actingAs.name, role: actingAs.role, requestId: actingAs.requestId, clientRequestId: actingAs.clientRequestId ?? null, via: actingAs.via }
        : actorOfResolution(resolution, operator);
      await recordAuditEvent(tx, {
        actor: auditActor, // A4: the verified principal (the approver, A5), never the payload's own `actor`
        action: 'reconciliation.resolve',
        target: { type: 'reconciliation', id: reconciliationId },
        before: { state: command.previousState },
        after: {
          state: to,
          decision: resolution.decision,
          reason: why,
          resolution_id: auditId,
          ledger_transaction_id: ledgerTransactionId,
          ...(approval ? { proposal_id: approval.proposalId, proposed_by: operator, approved_by: approval.approver.name } : {}),
          ...(posted ? { post_basis: posted.basis, posted_amount_minor: posted.amountMinor, posted_currency: posted.currency } : {}),
        },
      });
      await tx
        .update(reconciliations)
        .set({ state: to, reason: why, ...(ledgerTransactionId ? { ledgerTransactionId } : {}), updatedAt: new Date() })
        .where(eq(reconciliations.id, reconciliationId));
      await tx.insert(reconciliationTransitions).values({ reconciliationId, fromState: command.previousState, toState: to, actor, reason: why }).onConflictDoNothing();
      return { status: 'committed', state: to, auditId, ledgerTransactionId, replayed: false, note } as const;
    });
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal) return refusal;
    throw error;
  }
}
