// A27: dual control that one person cannot fake. With an identity provider configured, an approval is a second
// person's act the system can prove: the approver is an IdP subject (never an API key of any role, the bootstrap
// token or a Temporal identity, which ApiPay or its callers mint), signed in with a second factor (the token's `amr`
// or `acr`) no longer ago than `idp.approval_max_age` (else step-up: sign in again), and a different subject from
// the proposer. A proposal whose proposer is not an IdP subject needs two different IdP subjects: the first approval
// is recorded (proposal_approvals), the second posts. Pure: the callers load the earlier approvals.
import type { IdpConfig } from '../config/idp.js';
import { isIdpKey } from './idp-tokens.js';
import type { Principal } from './roles.js';

export type ApproverProblem =
  { kind: 'forbidden'; message: string } | { kind: 'step_up'; message: string; maxAgeSeconds: number };

/** Whether `approver` may approve at all at `nowMs` (who the proposer was is `pairVerdict`'s question). */
export function approverProblem(config: IdpConfig, approver: Principal, nowMs: number): ApproverProblem | null {
  const maxAgeSeconds = Math.floor(config.approval_max_age / 1000);
  const idp = approver.idp;
  if (!idp) {
    return {
      kind: 'forbidden',
      message:
        'dual control: an approval is made by a person signed in through the identity provider; API keys, ADMIN_TOKEN and Temporal identities approve nothing',
    };
  }
  const factor =
    idp.amr.some((m) => config.second_factor_amr.includes(m)) || (idp.acr !== null && config.second_factor_acr.includes(idp.acr));
  if (!factor) {
    return {
      kind: 'step_up',
      maxAgeSeconds,
      message: 'dual control: sign in with your second factor (TOTP or a security key) to approve',
    };
  }
  if (idp.authTime === null) {
    return {
      kind: 'step_up',
      maxAgeSeconds,
      message: 'dual control: your token does not say when you signed in (auth_time): sign in again to approve',
    };
  }
  const age = Math.floor(nowMs / 1000) - idp.authTime;
  if (age > maxAgeSeconds) {
    return {
      kind: 'step_up',
      maxAgeSeconds,
      message: `dual control: you signed in ${age} s ago; sign in again (at most ${maxAgeSeconds} s ago) to approve`,
    };
  }
  return null;
}

export type PairVerdict = { kind: 'approves' } | { kind: 'first_of_two' } | { kind: 'refused'; problem: string };

/**
 * Given the proposer's key, an IdP approver's key and the IdP approvals recorded so far: this approval posts, is
 * the first of the two a non-person's proposal needs, or is refused.
 */
export function pairVerdict(proposerKey: string, approverKey: string, earlier: string[]): PairVerdict {
  if (!isIdpKey(approverKey)) {
    return { kind: 'refused', problem: 'dual control: an approval is made by a person signed in through the identity provider' };
  }
  if (approverKey === proposerKey) {
    return { kind: 'refused', problem: 'dual control: you proposed this; a second person must approve it (or cancel it)' };
  }
  if (isIdpKey(proposerKey)) return { kind: 'approves' };
  const others = earlier.filter((k) => isIdpKey(k) && k !== approverKey && k !== proposerKey);
  if (others.length > 0) return { kind: 'approves' };
  if (earlier.includes(approverKey)) {
    return {
      kind: 'refused',
      problem:
        'dual control: you already approved this; it was proposed by no person, so a second person signed in through the identity provider must approve it too',
    };
  }
  return { kind: 'first_of_two' };
}
