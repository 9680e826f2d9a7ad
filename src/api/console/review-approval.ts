// A5, A27, A30: the second person approves the resolution waiting on a reconciliation from its console page. Only a
// person of the identity provider approves (never an API key or ADMIN_TOKEN), never the proposer; one whose second
// factor is missing or older than idp.approval_max_age is sent back through the IdP for a fresh sign-in (step-up:
// /console/login?step_up=1) and returns to the page to approve.
import type { Hono } from 'hono';
import { approverProblem } from '../../access/idp-approval.js';
import { BOOTSTRAP_KEY_ID } from '../../access/roles.js';
import { SelfApprovalError } from '../../inbound/reconciliation-admin.js';
import { PageError, requireAccess, type ConsoleEnv } from './context.js';
import type { ConsoleServices } from './services.js';

const APPROVE = 'POST /reconciliations/:id/resolution/approve';

export function registerReviewApproval(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.post('/reviews/:id/approve', async (c) => {
    const principal = requireAccess(c, s.rules, APPROVE);
    const view = c.get('view');
    const id = c.req.param('id');
    const page = `${view.base}/reviews/${encodeURIComponent(id)}`;
    if (principal.keyId === BOOTSTRAP_KEY_ID) throw new PageError(403, 'the bootstrap token (ADMIN_TOKEN) approves nothing');
    const problem = s.idp ? approverProblem(s.idp, principal, s.now().getTime()) : null;
    if (problem?.kind === 'forbidden') throw new PageError(403, problem.message);
    if (problem) return c.redirect(`${view.base}/login?step_up=1&return=${encodeURIComponent(`${page}?step_up=1`)}`, 303);
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
