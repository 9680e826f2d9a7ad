// A2: who resolves, adjusts or retries is the authenticated principal, never what a body says. A body may still
// name the operator (older clients do) but only as the caller's own key name or id; anyone else is refused.
// A12: the bootstrap token moves no money. A27: with an identity provider, only its people approve, with a fresh
// second factor.
import { approverProblem } from '../../access/idp-approval.js';
import { BOOTSTRAP_KEY_ID, type Principal } from '../../access/roles.js';
import type { IdpConfig } from '../../config/idp.js';
import { ApiError } from '../errors.js';

export const OPERATOR_FIELD_HELP = "A2: taken from the API key; if given it must be the key's own name or id (else 403)";

/** The principal's name, after checking a claimed operator (if any) is the principal itself. */
export function operatorOf(principal: Principal, claimed: string | undefined): string {
  if (claimed === undefined) return principal.name;
  const text = claimed.trim();
  if (text === principal.name || text === principal.keyId) return principal.name;
  throw new ApiError(
    'forbidden',
    `operator: is taken from your API key (${principal.keyId}, "${principal.name}"); leave it out or give your own key's name or id`,
  );
}

/** A12: the bootstrap token (ADMIN_TOKEN) is nobody: it moves no money (resolve, approve, adjust) on any path. */
export function refuseBootstrapMoney(principal: Principal): void {
  if (principal.keyId === BOOTSTRAP_KEY_ID) {
    throw new ApiError(
      'forbidden',
      'the bootstrap token (ADMIN_TOKEN) moves no money: create an admin key for a person (apipay keys create) and use that',
    );
  }
}

/** A27: with an IdP configured, an approver is one of its people with a second factor no older than the profile allows. */
export function refuseUnprovenApprover(idp: IdpConfig | undefined, principal: Principal, nowMs: number): void {
  if (!idp) return;
  const problem = approverProblem(idp, principal, nowMs);
  if (!problem) return;
  if (problem.kind === 'forbidden') throw new ApiError('forbidden', problem.message);
  throw new ApiError('step_up_required', problem.message, { max_age: problem.maxAgeSeconds, amr: idp.second_factor_amr });
}
