// A5, A27, A30: the second person approves the resolution waiting on a reconciliation from its console page. Only a
// person of the identity provider approves (never an API key or ADMIN_TOKEN), never the proposer; one whose second
// factor is missing or older than idp.approval_max_age is sent back through the IdP for a fresh sign-in (step-up:
// /console/login?step_up=1) and returns to the page to approve.
import type { Hono } from 'hono';
import { SelfApprovalError } from '../../inbound/reconciliation-admin.js';
import { PageError, requireAccess, type ConsoleEnv } from './context.js';
import { approverGate } from './approver-gate.js';
import type { ConsoleServices } from './services.js';

const APPROVE = 'POST /reconciliations/:id/resolution/approve';

export function registerReviewApproval(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.post('/reviews/:id/approve', async (c) => {
    const principal = requireAccess(c, s.rules, APPROVE);
    const view = c.get('view');
    const id = c.req.param('id');
    const page = `${view.base}/reviews/${encodeURIComponent(id)}`;
    const stepUp = approverGate(c, s, principal, page);
    if (stepUp) return stepUp;
    const after = await s.reconciliations
      .approve(id, { principal, requestId: principal.requestId ?? c.get('requestId') })
      .catch((error: unknown) => {
        if (error instanceof SelfApprovalError) throw new PageError(403, error.message);
        return s.conflict(error);
      });
    if (!after) throw new PageError(404, `reconciliation ${id} does not exist`);
    s.logger.info(
      { reconciliationId: id, keyId: principal.keyId, pending: after.pending },
      'resolution approved from the console (A5)',
    );
    return c.redirect(`${page}?resolved=1`, 303);
  });
}
