// The operator-resolution activities (R2): one PostgreSQL transaction for ledger posting, audit row and state
// transition (src/inbound/resolution-store.ts). A refusal comes back as an answer, so it is never retried. A4:
// each request is first attributed (admin API signature, or the identity Temporal recorded in the history);
// A5: above the dual-control amount the first answer is a proposal, committed once a second principal approves.
import { Context } from '@temporalio/activity';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import type { SecretKeys } from '../shared/keyring.js';
import { closeProposal, proposalById } from '../inbound/dual-control.js';
import { keyProblemAt } from '../access/request-freshness.js';
import { acceptedAtIn, authorize, identityIn, type AccessDeps, type RequestOrigin } from '../inbound/resolution-access.js';
import { limitsOf } from '../ledger/money-policy.js';
import { commitResolution, type ResolutionCommand, type ResolutionCommit, type ResolvedAccess } from '../inbound/resolution-store.js';
import type { ProposalDecision } from '../shared/inbound.js';
import { ledgerMutations, reconciliationTransitions as transitionsMetric, terminalRejected } from '../metrics/inbound-ledger.js';

export interface ResolutionActivityDeps {
  db: Db;
  logger: Logger;
  /** A4/A5: inbound.resolution_via_temporal and inbound.dual_control_above (absent in older tests: deny, none). */
  profile?: Profile;
  /** A4: the master keys the admin API's request signatures are derived from. */
  secretsKey?: SecretKeys;
}

/** The identity Temporal recorded with the request, read from this workflow run's history. */
async function historyIdentity(workflowId: string, origin: RequestOrigin): Promise<string | null> {
  const history = await Context.current().client.workflow.getHandle(workflowId, origin.runId).fetchHistory();
  return identityIn(history, origin);
}

/** A24: when the server recorded the request in this workflow run's history (the same answer on every retry). */
async function historyAcceptedAt(workflowId: string, origin: RequestOrigin): Promise<number | null> {
  const history = await Context.current().client.workflow.getHandle(workflowId, origin.runId).fetchHistory();
  return acceptedAtIn(history, origin);
}

export function createResolutionActivities(deps: ResolutionActivityDeps) {
  const access: AccessDeps = {
    keys: deps.secretsKey ?? Buffer.alloc(0),
    viaTemporal: deps.profile?.inbound.resolution_via_temporal ?? 'deny',
    stampIssuer: deps.profile?.idp?.issuer ?? null,
    identityOf: historyIdentity,
    ttlMs: deps.profile?.admin.signed_request_ttl ?? 5 * 60_000,
    acceptedAt: historyAcceptedAt,
    keyProblem: (keyId, role, atMs) => keyProblemAt(deps.db, keyId, role, atMs),
  };
  const limits = limitsOf(deps.profile?.inbound ?? { dual_control_above: {} }); // A11: the one money policy
  return {
    async commitOperatorResolution(command: ResolutionCommand): Promise<ResolutionCommit> {
      let resolved: ResolvedAccess | undefined;
      if (command.access) {
        const { origin, proposalId, approval } = command.access;
        const who = await authorize(access, {
          workflowId: command.reconciliationId,
          action: approval ? 'approve' : 'resolve',
          payload: approval ? { proposalId: approval.proposalId } : command.resolution,
          proof: approval ? approval.proof : command.resolution.api,
          origin,
        });
        if (!who.ok) {
          deps.logger.warn({ reconciliationId: command.reconciliationId, problem: who.problem }, 'operator resolution refused (A4)');
          return { status: 'refused', problem: who.problem };
        }
        resolved = { principal: who.principal, limits, proposalId, ...(approval ? { approves: approval.proposalId } : {}) };
      }
      const result = await commitResolution(deps.db, command, resolved);
      if (result.status === 'refused') {
        // The problem names fields and codes, never the operator's text.
        deps.logger.warn({ reconciliationId: command.reconciliationId, problem: result.problem }, 'operator resolution refused');
      } else if (result.status === 'proposed') {
        deps.logger.info({ reconciliationId: command.reconciliationId, proposalId: result.proposal.id }, 'resolution proposed, awaiting approval (A5)');
      } else if (!result.replayed) {
        transitionsMetric.inc({ to: result.state, actor: 'operator' });
        if (result.state === 'rejected') terminalRejected.inc({ actor: 'operator' });
        if (result.ledgerTransactionId && command.postingKind) ledgerMutations.inc({ kind: command.postingKind, result: 'posted' });
      }
      return result;
    },

    /** A5: the proposer or another principal withdraws a waiting proposal; the reconciliation stays in manual_review. */
    async cancelResolutionProposal(request: {
      reconciliationId: string;
      proposalId: string;
      decision: ProposalDecision;
      origin: RequestOrigin;
    }): Promise<{ status: 'cancelled'; by: string } | { status: 'refused'; problem: string }> {
      const who = await authorize(access, {
        workflowId: request.reconciliationId,
        action: 'cancel',
        payload: { proposalId: request.proposalId },
        proof: request.decision.api,
        origin: request.origin,
      });
      if (!who.ok) return { status: 'refused', problem: who.problem };
      if (!(await closeProposal(deps.db, request.proposalId, 'cancelled', who.principal))) {
        // A retry after a lost completion finds it cancelled by this same principal: the same answer.
        const row = await proposalById(deps.db, request.proposalId);
        if (row?.closed === 'cancelled' && row.closedByKey === who.principal.key) return { status: 'cancelled', by: who.principal.name };
        return { status: 'refused', problem: `proposal ${request.proposalId} is no longer waiting (${row?.closed ?? 'unknown'})` };
      }
      deps.logger.info({ reconciliationId: request.reconciliationId, proposalId: request.proposalId }, 'resolution proposal cancelled (A5)');
      return { status: 'cancelled', by: who.principal.name };
    },
  };
}
