// What the admin API does with reconciliations: list and read the projection with its trail and resolution,
// and resolve one through the workflow's `resolve` update (I11), so the audit row is written in one place.
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { and, asc, eq, type SQL } from 'drizzle-orm';
import { timeWindow, type ListWindow } from '../db/list-window.js';
import type { Db } from '../db/client.js';
import { operatorResolutions, reconciliations, reconciliationTransitions } from '../db/schema/index.js';
import { reconciliationStateQuery, resolveUpdate, type OperatorResolution, type ReconciliationProgress, type ReconciliationState } from '../shared/inbound.js';

export type ReconciliationRow = typeof reconciliations.$inferSelect;
export type TransitionRow = typeof reconciliationTransitions.$inferSelect;
export type ResolutionRow = typeof operatorResolutions.$inferSelect;

export class ResolutionConflictError extends Error {
  override name = 'ResolutionConflictError';
}

const TIMED_OUT = Symbol('timed out');
/** Resolves to TIMED_OUT after `ms`; the promise itself keeps running (its outcome lands in the workflow). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms))));
  promise.catch(() => {}); // a late rejection is not unhandled
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function createReconciliationAdmin({ db, temporal, answerWithinMs = 10_000 }: { db: Db; temporal: Client; answerWithinMs?: number }) {
  async function get(id: string) {
    const [row] = await db.select().from(reconciliations).where(eq(reconciliations.id, id));
    if (!row) return undefined;
    const [transitions, [resolution]] = await Promise.all([
      db.select().from(reconciliationTransitions).where(eq(reconciliationTransitions.reconciliationId, id)).orderBy(asc(reconciliationTransitions.id)),
      db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, id)),
    ]);
    return { reconciliation: row, transitions, resolution: resolution ?? null };
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
    async resolve(id: string, resolution: OperatorResolution) {
      const deadline = Date.now() + answerWithinMs;
      const found = await get(id);
      if (!found) return undefined;
      if (found.resolution) throw new ResolutionConflictError(`reconciliation ${id} was already resolved (${found.resolution.id})`);
      if (found.reconciliation.state !== 'manual_review') {
        throw new ResolutionConflictError(`reconciliation ${id} is ${found.reconciliation.state}, not manual_review`);
      }
      let pending = false;
      try {
        const handle = temporal.workflow.getHandle(id);
        const started = await within(handle.startUpdate(resolveUpdate, { args: [resolution], waitForStage: WorkflowUpdateStage.ACCEPTED }), deadline - Date.now());
        pending = started === TIMED_OUT || (await within(started.result(), deadline - Date.now())) === TIMED_OUT;
      } catch (error) {
        if (error instanceof WorkflowUpdateFailedError) {
          throw new ResolutionConflictError(`resolution refused: ${error.cause?.message ?? error.message}`);
        }
        if (error instanceof WorkflowNotFoundError) throw new ResolutionConflictError(`reconciliation ${id} is no longer open`);
        throw error;
      }
      const now = await get(id);
      return now && { ...now, pending };
    },
  };
}
