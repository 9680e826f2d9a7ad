// A5, A27, A30: who may press a console Approve button, for every kind of proposal (a resolution, a ledger
// adjustment): never ADMIN_TOKEN; with an IdP, only its people with a fresh second factor (a key is 403, a missing or
// stale factor is sent back through the IdP, step-up, and returns to the page). The proposer is refused by the service.
import { approverProblem } from '../../access/idp-approval.js';
import { BOOTSTRAP_KEY_ID, type Principal } from '../../access/roles.js';
import { PageError, type ConsoleContext } from './context.js';
import type { ConsoleServices } from './services.js';

/** Throws 403 for a caller who may never approve; a redirect to step-up when the factor is missing or stale. */
export function approverGate(c: ConsoleContext, s: ConsoleServices, principal: Principal, page: string): Response | undefined {
  if (principal.keyId === BOOTSTRAP_KEY_ID) throw new PageError(403, 'the bootstrap token (ADMIN_TOKEN) approves nothing');
  const problem = s.idp ? approverProblem(s.idp, principal, s.now().getTime()) : null;
  if (problem?.kind === 'forbidden') throw new PageError(403, problem.message);
  if (problem) return c.redirect(`${c.get('view').base}/login?step_up=1&return=${encodeURIComponent(`${page}?step_up=1`)}`, 303);
  return undefined;
}
