// C1, C2: the console's signed sessions, CSRF tokens and portal links: what a tampered, expired, cross-surface or
// cross-purpose token does (it is refused), and that no cookie carries a credential.
import { describe, expect, it } from 'vitest';
import { createSessionKeys } from '../../src/api/console/session.js';

const KEY = Buffer.alloc(32, 3).toString('base64');
let clock = new Date('2026-12-01T10:00:00Z');
const keys = createSessionKeys(KEY, () => clock);

describe('C1 console sessions', () => {
  it('C1 a session reads back on its surface only, and not once expired', () => {
    clock = new Date('2026-12-01T10:00:00Z');
    const { cookie, session } = keys.issue('console', { kind: 'key', keyId: 'apk_01jd2m3k4n5p6q7r8s9t0v1w2x' }, 60);
    expect(keys.read('console', cookie)).toEqual(session);
    expect(keys.read('portal', cookie)).toBeUndefined();
    clock = new Date('2026-12-01T10:01:01Z');
    expect(keys.read('console', cookie)).toBeUndefined();
  });

  it('C1 a tampered cookie, or one signed with another server key, is refused', () => {
    clock = new Date('2026-12-01T10:00:00Z');
    const { cookie } = keys.issue('console', { kind: 'key', keyId: 'apk_01jd2m3k4n5p6q7r8s9t0v1w2x' }, 600);
    const [body, mac] = cookie.split('.');
    const forged = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(body!, 'base64url').toString()),
        subject: { kind: 'bootstrap', fingerprint: 'x' },
      }),
    ).toString('base64url');
    const other = createSessionKeys(Buffer.alloc(32, 4).toString('base64'), () => clock);
    for (const bad of [
      `${forged}.${mac}`,
      // Another MAC: its last two characters replaced (a MAC that already ended in AA stayed valid: a fresh-clone flake).
      `${body}.${mac!.slice(0, -2)}${mac!.endsWith('AA') ? 'BA' : 'AA'}`,
      `${body}`,
      `${body}.${mac}.x`,
      '',
      other.issue('console', { kind: 'anonymous' }, 600).cookie,
    ]) {
      expect(keys.read('console', bad), bad).toBeUndefined();
    }
  });

  it('C1 the CSRF token is bound to its session', () => {
    const a = keys.issue('console', { kind: 'anonymous' }, 600).session;
    const b = keys.issue('console', { kind: 'anonymous' }, 600).session;
    expect(keys.checkCsrf(a, keys.csrfToken(a))).toBe(true);
    expect(keys.checkCsrf(a, keys.csrfToken(b))).toBe(false);
    expect(keys.checkCsrf(a, undefined)).toBe(false);
    expect(keys.checkCsrf(a, '')).toBe(false);
  });

  it('C1 a bootstrap session holds a fingerprint of ADMIN_TOKEN, never the token, and another token does not match', () => {
    const token = 'bootstrap-token-0123456789';
    const { cookie } = keys.issue('console', { kind: 'bootstrap', fingerprint: keys.fingerprint(token) }, 600);
    expect(Buffer.from(cookie.split('.')[0]!, 'base64url').toString()).not.toContain(token);
    expect(keys.fingerprint(token)).not.toBe(keys.fingerprint(`${token}-rotated`));
  });
});

describe('C2 portal links', () => {
  it('C2 a link opens for its lifetime, names one account, and never passes as a session (or a session as a link)', () => {
    clock = new Date('2026-12-01T10:00:00Z');
    const { token } = keys.portalLink('acct_shop', 900);
    expect(keys.readPortalLink(token)).toMatchObject({ merchantAccount: 'acct_shop' });
    expect(keys.read('portal', token)).toBeUndefined();
    expect(
      keys.readPortalLink(keys.issue('portal', { kind: 'link', merchantAccount: 'acct_shop', linkId: 'x' }, 900).cookie),
    ).toBeUndefined();
    clock = new Date('2026-12-01T10:15:01Z');
    expect(keys.readPortalLink(token)).toBeUndefined();
  });
});
