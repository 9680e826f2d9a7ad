// A31: the worker's start-up check for `resolution_via_temporal: idp`: a frontend that answers a tokenless call
// cannot be the one that stamps identities; PermissionDenied (7) or Unauthenticated (16) is the answer it must give;
// any other failure (unreachable, unimplemented) cannot tell, and the worker does not start either.
import { describe, expect, it } from 'vitest';
import { grpcCode, probeVerdict } from '../../src/lib/temporal-authz-probe.js';

describe('A31 the tokenless probe of the Temporal frontend', () => {
  it('A31 an answered call is a problem that names the address and the fix', () => {
    const problem = probeVerdict('127.0.0.1:7233', { ok: true });
    expect(problem).toMatch(/127\.0\.0\.1:7233 answered a call that carried no token/);
    expect(problem).toContain('fix: ');
  });

  it('A31 PermissionDenied and Unauthenticated (on the error or its cause) mean the server judges callers', () => {
    expect(probeVerdict('t:1', { ok: false, error: Object.assign(new Error('denied'), { code: 7 }) })).toBeNull();
    expect(probeVerdict('t:1', { ok: false, error: { message: 'x', cause: { code: 16 } } })).toBeNull();
  });

  it('A31 anything else cannot tell: unavailable, unimplemented, no code at all', () => {
    for (const error of [
      Object.assign(new Error('14 UNAVAILABLE: connect refused\nmore'), { code: 14 }),
      { code: 12 },
      new Error('boom'),
    ]) {
      const problem = probeVerdict('t:1', { ok: false, error });
      expect(problem).toMatch(/did not say whether it authorizes/);
      expect(problem).not.toContain('\n');
    }
    expect(grpcCode({ code: '7' })).toBeUndefined();
  });
});
