// A27: the first of the two IdP approvals a resolution proposed by no person needs (an API key, or a Temporal
// identity under inbound.resolution_via_temporal: allow): recorded with its audit row in one transaction, nothing
// sent to the workflow. The second IdP subject's approval goes to the workflow, whose activity checks both again
// (src/access/people.ts, twoPeopleProblem).
import { recordFirstApproval } from '../access/people.js';
import type { Principal } from '../access/roles.js';
import { actorOf, recordAuditEvent } from '../audit/record.js';
import type { Db } from '../db/client.js';

export async function firstResolutionApproval(
  db: Db,
  reconciliationId: string,
  proposalId: string,
  who: { principal: Principal; requestId: string },
): Promise<void> {
  await db.transaction(async (tx) => {
    const wrote = await recordFirstApproval(tx, proposalId, {
      key: who.principal.keyId,
      name: who.principal.name,
      requestId: who.requestId,
    });
    if (!wrote) return; // a repeated request: recorded already, audited once
    await recordAuditEvent(tx, {
      actor: actorOf({ ...who.principal, requestId: who.requestId }),
      action: 'reconciliation.first_approval',
      target: { type: 'reconciliation', id: reconciliationId },
      after: { proposal_id: proposalId, approvals: 1, needed: 2 },
    });
  });
}
