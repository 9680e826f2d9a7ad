// What the admin API does with reconciliations: list and read the projection with its trail and resolution,
// and resolve one through the workflow's `resolve` update (I11), so the audit row is written in one place.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { and, asc, eq, type SQL } from 'drizzle-orm';
import { timeWindow, type ListWindow } from '../db/list-window.js';
import type { Db } from '../db/client.js';
import { operatorResolutions, reconciliations, reconciliationTransitions } from '../db/schema/index.js';
import {
  approveResolutionUpdate,
  cancelResolutionUpdate,
  reconciliationStateQuery,
  resolveUpdate,
  type OperatorResolution,
  type ReconciliationProgress,
  type ReconciliationState,
} from '../shared/inbound.js';
import { isIdpKey } from '../access/idp-tokens.js';
import { idpApprovalVerdict, twoPeopleProblem } from '../access/people.js';
import { firstResolutionApproval } from './first-approval.js';
import { signRequest, type SignedAction } from '../access/request-signing.js';
import type { Principal } from '../access/roles.js';
import type { SecretKeys } from '../shared/keyring.js';
import { openProposal } from './dual-control.js';

/** Who sends a request through the admin API (A4): signed into it, so the workflow knows it came from here. */
export interface Requester {
  principal: Principal;
  requestId: string;
}

export type ReconciliationRow = typeof reconciliations.$inferSelect;
export type TransitionRow = typeof reconciliationTransitions.$inferSelect;
export type ResolutionRow = typeof operatorResolutions.$inferSelect;

export class ResolutionConflictError extends Error {
  override name = 'ResolutionConflictError';
}

/** A5: the proposer tried to approve their own proposal. */
export class SelfApprovalError extends Error {
  override name = 'SelfApprovalError';
}

const TIMED_OUT = Symbol('timed out');
/** Resolves to TIMED_OUT after `ms`; the promise itself keeps running (its outcome lands in the workflow). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms))));
  promise.catch(() => {}); // a late rejection is not unhandled
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createReconciliationAdmin({
  db,
  temporal,
  keys,
  answerWithinMs = 10_000,
}: {
  db: Db;
  temporal: Client;
  /** A4: the master keys the request signatures are derived from (the workers hold the same). */
  keys: SecretKeys;
  answerWithinMs?: number;
}) {
  async function get(id: string) {
    const [row] = await db.select().from(reconciliations).where(eq(reconciliations.id, id));
    if (!row) return undefined;
    const [transitions, [resolution], proposal] = await Promise.all([
      db.select().from(reconciliationTransitions).where(eq(reconciliationTransitions.reconciliationId, id)).orderBy(asc(reconciliationTransitions.id)),
      db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, id)),
      openProposal(db, id),
    ]);
    return { reconciliation: row, transitions, resolution: resolution ?? null, proposal: proposal ?? null };
  }

  const sign = (id: string, action: SignedAction, payload: object, who: Requester) =>
    signRequest(keys, id, action, payload, {
      principal: { keyId: who.principal.keyId, name: who.principal.name, role: who.principal.role },
      requestId: who.requestId,
      issuedAt: new Date().toISOString(), // A24: expires admin.signed_request_ttl later
      ...(who.principal.clientRequestId ? { clientRequestId: who.principal.clientRequestId } : {}),
    });

  /** Runs one update within the deadline: pending when it has not finished by then (it still runs). */
  async function send(id: string, deadline: number, start: (handle: ReturnType<Client['workflow']['getHandle']>) => Promise<{ result: () => Promise<unknown> }>) {
    try {
      const started = await within(start(temporal.workflow.getHandle(id)), deadline - Date.now());
      return started === TIMED_OUT || (await within(started.result(), deadline - Date.now())) === TIMED_OUT;
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) {
        throw new ResolutionConflictError(`resolution refused: ${error.cause?.message ?? error.message}`);
      }
      if (error instanceof WorkflowNotFoundError) throw new ResolutionConflictError(`reconciliation ${id} is no longer open`);
      throw error;
    }
  }

  /** A5: approve (a second principal) or cancel (anyone) the proposal waiting on reconciliation `id`. */
  async function decide(id: string, kind: 'approve' | 'cancel', who: Requester) {
    const deadline = Date.now() + answerWithinMs;
    const found = await get(id);
    if (!found) return undefined;
    const proposal = found.proposal;
    if (!proposal) throw new ResolutionConflictError(`reconciliation ${id} has no resolution waiting for approval`);
    if (kind === 'approve' && proposal.proposedByKey === who.principal.keyId) {
      throw new SelfApprovalError(`dual control: you proposed ${proposal.id}; a second principal must approve it (or cancel it)`);
    }
    if (kind === 'approve' && isIdpKey(who.principal.keyId)) {
      // A27: an IdP subject; a proposal by no person (an API key, a Temporal identity) needs two of them.
      const verdict = await idpApprovalVerdict(db, proposal.id, proposal.proposedByKey, who.principal.keyId);
      if (verdict.kind === 'refused') throw new SelfApprovalError(verdict.problem);
      if (verdict.kind === 'first_of_two') {
        await firstResolutionApproval(db, id, proposal.id, who);
        return { ...found, pending: false, awaitingSecondApproval: true };
      }
    }
    if (kind === 'approve') {
      const problem = await twoPeopleProblem(db, proposal.proposedByKey, who.principal.keyId, proposal.id); // A12: two people
      if (problem) throw new SelfApprovalError(problem);
    }
    const decision = { proposalId: proposal.id };
    const api = sign(id, kind, decision, who);
    const update = kind === 'approve' ? approveResolutionUpdate : cancelResolutionUpdate;
    const pending = await send(id, deadline, (handle) =>
      handle.startUpdate(update as typeof approveResolutionUpdate, { args: [{ ...decision, api }], waitForStage: WorkflowUpdateStage.ACCEPTED }),
    );
    const now = await get(id);
    return now && { ...now, pending };
  }

  return {
    /** C9: ordered by creation time (ids name the provider's event, not a time), oldest first unless desc. */
    async list(
      q: { state?: ReconciliationState; provider?: string; paymentReference?: string; providerEventId?: string; after?: { at: Date; id: string }; limit: number } & ListWindow,
    ): Promise<ReconciliationRow[]> {
      const window = timeWindow(reconciliations.id, reconciliations.createdAt, q);
      const where: SQL[] = window.where;
      if (q.state) where.push(eq(reconciliations.state, q.state));
      if (q.provider) where.push(eq(reconciliations.provider, q.provider));
      if (q.paymentReference) where.push(eq(reconciliations.paymentReference, q.paymentReference)); // C1: the console's search
      if (q.providerEventId) where.push(eq(reconciliations.providerEventId, q.providerEventId));
      return db.select().from(reconciliations).where(and(...where)).orderBy(...window.orderBy).limit(q.limit + 1);
    },

    get,

    /** C6: the resolutions the workflow refused (newest last), or undefined when it cannot be asked (closed, unreachable). */
    async refusals(id: string): Promise<NonNullable<ReconciliationProgress['refusedResolutions']> | undefined> {
      const asked = temporal.workflow.getHandle(id).query(reconciliationStateQuery);
      const answer = await within(asked, 3000).catch(() => undefined);
      return answer && answer !== TIMED_OUT ? (answer.refusedResolutions ?? []) : undefined;
    },

    /**
     * I11: refused (ResolutionConflictError) unless the reconciliation waits in manual_review unresolved. R2:
     * answers within answerWithinMs whatever the workflow does: `pending: true` with the current state when
     * the update has not finished by then (it still runs; the state query and GET show its outcome).
     */
    async resolve(id: string, resolution: OperatorResolution, who: Requester) {
      const deadline = Date.now() + answerWithinMs;
      const found = await get(id);
      if (!found) return undefined;
      if (found.resolution) throw new ResolutionConflictError(`reconciliation ${id} was already resolved (${found.resolution.id})`);
      if (found.reconciliation.state !== 'manual_review') {
        throw new ResolutionConflictError(`reconciliation ${id} is ${found.reconciliation.state}, not manual_review`);
      }
      if (found.proposal) throw new ResolutionConflictError(`reconciliation ${id} has proposal ${found.proposal.id} waiting for approval: approve or cancel it`);
      const api = sign(id, 'resolve', resolution, who);
      const pending = await send(id, deadline, (handle) =>
        handle.startUpdate(resolveUpdate, { args: [{ ...resolution, api }], waitForStage: WorkflowUpdateStage.ACCEPTED }),
      );
      const now = await get(id);
      return now && { ...now, pending };
    },

    approve: (id: string, who: Requester) => decide(id, 'approve', who),
    cancel: (id: string, who: Requester) => decide(id, 'cancel', who),
  };
}
