// A27: the pure rules of dual control between IdP people (src/access/idp-approval.ts) and A26's group → role map
// (src/access/idp-tokens.ts), with fast-check over open-ended keys and approval lists.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approverProblem, pairVerdict } from '../../src/access/idp-approval.js';
import { roleOfGroups } from '../../src/access/idp-tokens.js';
import type { Principal } from '../../src/access/roles.js';
import { idpSchema } from '../../src/config/idp.js';

const document = {
  issuer: 'https://idp.example.com/realms/x',
  audience: 'apipay',
  roles: { viewer: 'viewer', ops: 'operator', approvers: 'operator', root: 'admin', shop: 'merchant' },
};
const config = idpSchema.parse(document);
const now = 1_800_000_000_000;
const person = (idp: Partial<NonNullable<Principal['idp']>> | undefined): Principal => ({
  keyId: 'idp:s@x',
  name: 'P',
  role: 'operator',
  merchantAccount: null,
  ...(idp
    ? {
        idp: { issuer: 'x', subject: 's', email: null, groups: [], amr: ['pwd', 'otp'], acr: null, authTime: now / 1000, ...idp },
      }
    : {}),
});

describe('A27 approverProblem', () => {
  it('A27 nothing minted inside ApiPay approves; a missing or stale second factor steps up', () => {
    expect(approverProblem(config, { keyId: 'apk_x', name: 'k', role: 'admin', merchantAccount: null }, now)?.kind).toBe(
      'forbidden',
    );
    expect(
      approverProblem(config, { keyId: 'bootstrap', name: 'ADMIN_TOKEN', role: 'admin', merchantAccount: null }, now)?.kind,
    ).toBe('forbidden');
    expect(approverProblem(config, person({}), now)).toBeNull();
    expect(approverProblem(config, person({ amr: ['pwd'] }), now)?.kind).toBe('step_up');
    expect(approverProblem(config, person({ authTime: null }), now)?.kind).toBe('step_up');
    expect(approverProblem(config, person({ authTime: now / 1000 - 301 }), now)?.kind).toBe('step_up');
    expect(approverProblem(config, person({ authTime: now / 1000 - 300 }), now)).toBeNull();
    const byAcr = idpSchema.parse({ ...document, second_factor_acr: ['mfa'] });
    expect(approverProblem(byAcr, person({ amr: [], acr: 'mfa' }), now)).toBeNull();
  });
});

const key = fc.oneof(
  fc.string({ maxLength: 6 }).map((s) => `idp:${s}@x`),
  fc.string({ maxLength: 6 }).map((s) => `apk_${s}`),
  fc.string({ maxLength: 6 }).map((s) => `temporal:${s}`),
  fc.constant('bootstrap'),
);

describe('A27 pairVerdict', () => {
  it('A27 an approval posts only for an IdP approver other than the proposer, and a non-person s proposal needs another IdP approver first', () => {
    fc.assert(
      fc.property(key, key, fc.array(key, { maxLength: 4 }), (proposer, approver, earlier) => {
        const verdict = pairVerdict(proposer, approver, earlier);
        const idp = (k: string) => k.startsWith('idp:');
        if (verdict.kind === 'approves') {
          expect(idp(approver)).toBe(true);
          expect(approver).not.toBe(proposer);
          expect(idp(proposer) || earlier.some((k) => idp(k) && k !== approver && k !== proposer)).toBe(true);
        }
        if (verdict.kind === 'first_of_two') expect(idp(approver) && !idp(proposer)).toBe(true);
        if (!idp(approver)) expect(verdict.kind).toBe('refused');
      }),
    );
  });
});

describe('A26 roleOfGroups', () => {
  it('A26 the highest staff role wins; merchant only without a staff group; unknown groups give none', () => {
    expect(roleOfGroups(config, ['viewer', '/root'])).toBe('admin');
    expect(roleOfGroups(config, ['shop', 'ops'])).toBe('operator');
    expect(roleOfGroups(config, ['shop'])).toBe('merchant');
    expect(roleOfGroups(config, ['marketing'])).toBeNull();
    expect(roleOfGroups(config, [])).toBeNull();
  });
});
