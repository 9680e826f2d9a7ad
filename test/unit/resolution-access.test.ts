// A4: the admin API's request signature (bound to workflow, action, payload and principal; verifiable with a
// previous master key during rotation), attribution from the history, and A5's threshold rule.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonical, signRequest, verifyRequest } from '../../src/access/request-signing.js';
import { acceptedAtIn, authorize, identityIn, type AccessDeps } from '../../src/inbound/resolution-access.js';

const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);
const T0 = Date.parse('2026-12-03T10:00:00Z');
const who = {
  principal: { keyId: 'apk_alice', name: 'alice', role: 'operator' },
  requestId: 'req-1',
  issuedAt: new Date(T0).toISOString(),
};
const payload = { decision: 'applied', operator: 'alice', reason: 'ok', post: 'webhook' };
const wf = 'reconcile:p:evt_1';

describe('A4 admin API request signatures', () => {
  it('A4 verifies what was signed, and nothing else', () => {
    const proof = signRequest(k1, wf, 'resolve', payload, who);
    expect(verifyRequest(k1, wf, 'resolve', payload, proof)).toBe(true);
    expect(verifyRequest(k1, wf, 'resolve', { ...payload, api: proof }, proof)).toBe(true); // the proof itself is not signed
    expect(verifyRequest(k1, 'reconcile:p:evt_2', 'resolve', payload, proof)).toBe(false);
    expect(verifyRequest(k1, wf, 'approve', payload, proof)).toBe(false);
    expect(verifyRequest(k1, wf, 'resolve', { ...payload, decision: 'rejected' }, proof)).toBe(false);
    expect(verifyRequest(k1, wf, 'resolve', payload, { ...proof, principal: { ...proof.principal, keyId: 'bootstrap' } })).toBe(
      false,
    );
    expect(verifyRequest(k1, wf, 'resolve', payload, { ...proof, signature: 'AAAA' })).toBe(false);
    expect(verifyRequest(k2, wf, 'resolve', payload, proof)).toBe(false);
  });

  it('A4 a signature made with the previous master key verifies while that key is configured (A8 rotation)', () => {
    const proof = signRequest(k1, wf, 'cancel', { proposalId: 'rpr_1' }, who);
    const rotated = {
      currentId: 'k2',
      keys: new Map([
        ['k2', k2],
        ['k1', k1],
      ]),
    };
    expect(verifyRequest(rotated, wf, 'cancel', { proposalId: 'rpr_1' }, proof)).toBe(true);
    expect(verifyRequest({ currentId: 'k2', keys: new Map([['k2', k2]]) }, wf, 'cancel', { proposalId: 'rpr_1' }, proof)).toBe(
      false,
    );
  });

  it('A4 canonical JSON does not depend on key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean())), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonical(reversed)).toBe(canonical(object));
      }),
    );
  });
});

describe('A4 attribution', () => {
  const history = {
    events: [
      { workflowExecutionSignaledEventAttributes: { signalName: 'operatorResolution', identity: 'first@ui' } },
      { workflowExecutionSignaledEventAttributes: { signalName: 'other', identity: 'x' } },
      { workflowExecutionSignaledEventAttributes: { signalName: 'operatorResolution', identity: 'second@cli' } },
      { workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { meta: { updateId: 'u-1', identity: 'ana@ui' } } } },
    ],
  };
  const origin = { runId: 'r' };
  it('A4 finds the update by id and the n-th resolution signal', () => {
    expect(identityIn(history, { ...origin, via: 'update', updateId: 'u-1' })).toBe('ana@ui');
    expect(identityIn(history, { ...origin, via: 'update', updateId: 'u-2' })).toBeNull();
    expect(identityIn(history, { ...origin, via: 'signal', signalIndex: 1 })).toBe('second@cli');
    expect(identityIn(history, { ...origin, via: 'signal', signalIndex: 2 })).toBeNull();
  });

  const deps = (viaTemporal: AccessDeps['viaTemporal'], more: Partial<AccessDeps> = {}): AccessDeps => ({
    keys: k1,
    viaTemporal,
    stampIssuer: null,
    identityOf: async () => 'ana@ui',
    ttlMs: 300_000,
    acceptedAt: async () => T0 + 1000,
    keyProblem: async () => null,
    ...more,
  });
  it('A4 deny refuses an unsigned request; allow attributes it to the recorded identity, never to the payload', async () => {
    const request = {
      workflowId: wf,
      action: 'resolve' as const,
      payload,
      proof: undefined,
      origin: { ...origin, via: 'update' as const, updateId: 'u-1' },
    };
    expect(await authorize(deps('deny'), request)).toMatchObject({ ok: false, problem: expect.stringMatching(/deny/) });
    expect(await authorize(deps('allow'), request)).toEqual({
      ok: true,
      principal: { key: 'temporal:ana@ui', name: 'ana@ui', role: null, via: 'temporal', requestId: 'u-1' },
    });
    const signed = { ...request, proof: signRequest(k1, wf, 'resolve', payload, who) };
    expect(await authorize(deps('deny'), signed)).toMatchObject({ ok: true, principal: { key: 'apk_alice', via: 'api' } });
    const viewer = {
      ...request,
      proof: signRequest(k1, wf, 'resolve', payload, { ...who, principal: { ...who.principal, role: 'viewer' } }),
    };
    expect(await authorize(deps('deny'), viewer)).toMatchObject({ ok: false });
  });
});

describe("A31 resolution_via_temporal: idp — the identity ApiPay's Temporal server stamped is that person", () => {
  const issuer = 'http://127.0.0.1:8180/realms/apipay';
  const request = {
    workflowId: wf,
    action: 'resolve' as const,
    payload,
    proof: undefined,
    origin: { runId: 'r', via: 'update' as const, updateId: 'u-9' },
  };
  const under = (identity: string, stampIssuer: string | null = issuer): AccessDeps => ({
    keys: k1,
    viaTemporal: 'idp',
    stampIssuer,
    identityOf: async () => identity,
    ttlMs: 300_000,
    acceptedAt: async () => T0,
    keyProblem: async () => null,
  });

  it("A31 a stamped identity of the profile's issuer acts under that person's idp: key (what dual control and budgets count)", async () => {
    const stamped = `idp:0b6f-alice@${issuer}`;
    expect(await authorize(under(stamped), request)).toEqual({
      ok: true,
      principal: { key: stamped, name: '0b6f-alice', role: null, via: 'temporal', requestId: 'u-9' },
    });
  });

  it('A31 anything else a client could send is refused: its own words, another issuer, an empty subject, no issuer configured', async () => {
    for (const identity of [
      'ana@ui',
      'temporal-cli:ana',
      `idp:@${issuer}`,
      `idp:ana@${issuer}.evil`,
      'idp:ana@https://other.example/realms/apipay',
      `xidp:ana@${issuer}`,
      `idp:${'a'.repeat(201)}@${issuer}`,
    ]) {
      expect(await authorize(under(identity), request), identity).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/resolution_via_temporal: idp/),
      });
    }
    expect(await authorize(under(`idp:ana@${issuer}`, null), request)).toMatchObject({ ok: false });
  });

  it('A31 any identity that is not exactly idp:<subject>@<issuer> is refused (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), async (identity) => {
        const verdict = await authorize(under(identity), request);
        const good =
          identity.trim().startsWith('idp:') &&
          identity.trim().endsWith(`@${issuer}`) &&
          identity.trim().length > `idp:@${issuer}`.length;
        if (!good) expect(verdict.ok).toBe(false);
      }),
    );
  });
});

describe('A24 signed requests expire and die with their key', () => {
  const origin = { runId: 'r', via: 'update' as const, updateId: 'u-1' };
  const request = (proof: ReturnType<typeof signRequest>) => ({
    workflowId: wf,
    action: 'resolve' as const,
    payload,
    proof,
    origin,
  });
  const base: AccessDeps = {
    keys: k1,
    viaTemporal: 'deny',
    stampIssuer: null,
    identityOf: async () => null,
    ttlMs: 300_000,
    acceptedAt: async () => T0 + 1000,
    keyProblem: async () => null,
  };

  it('A24 the issue time, the server request id and the client request id are signed', () => {
    const proof = signRequest(k1, wf, 'resolve', payload, { ...who, clientRequestId: 'client-7' });
    expect(verifyRequest(k1, wf, 'resolve', payload, proof)).toBe(true);
    expect(verifyRequest(k1, wf, 'resolve', payload, { ...proof, issuedAt: new Date(T0 + 3_600_000).toISOString() })).toBe(false);
    expect(verifyRequest(k1, wf, 'resolve', payload, { ...proof, clientRequestId: 'client-8' })).toBe(false);
    const { issuedAt: _dropped, ...v1 } = proof;
    expect(verifyRequest(k1, wf, 'resolve', payload, v1 as typeof proof)).toBe(false);
  });

  it('A24 accepted within the TTL: attributed with the server request id and the client one beside it', async () => {
    const proof = signRequest(k1, wf, 'resolve', payload, { ...who, clientRequestId: 'client-7' });
    expect(await authorize(base, request(proof))).toEqual({
      ok: true,
      principal: {
        key: 'apk_alice',
        name: 'alice',
        role: 'operator',
        via: 'api',
        requestId: 'req-1',
        clientRequestId: 'client-7',
      },
    });
  });

  const at = (ms: number | null): Partial<AccessDeps> => ({ acceptedAt: async () => ms });
  it.each<[string, Partial<AccessDeps>, RegExp]>([
    ['accepted after the TTL (replayed from the history later)', at(T0 + 300_001), /expired/],
    ['signed more than the skew in the future', at(T0 - 61_000), /in the future/],
    ['not in the history', at(null), /not in the workflow history/],
    ['its key revoked', { keyProblem: async () => 'key apk_alice is revoked: refused' }, /revoked/],
  ])('A24 refused when %s', async (_name, more, problem) => {
    const proof = signRequest(k1, wf, 'resolve', payload, who);
    expect(await authorize({ ...base, ...more }, request(proof))).toEqual({ ok: false, problem: expect.stringMatching(problem) });
  });

  it('A24 the key is judged at the time Temporal recorded the request', async () => {
    const seen: unknown[] = [];
    const proof = signRequest(k1, wf, 'resolve', payload, who);
    await authorize({ ...base, keyProblem: async (...args) => (seen.push(args), null) }, request(proof));
    expect(seen).toEqual([['apk_alice', 'operator', T0 + 1000]]);
  });

  it('A24 the acceptance time is read from the accepted update or the n-th signal', () => {
    const history = {
      events: [
        {
          eventTime: { seconds: 100, nanos: 5_000_000 },
          workflowExecutionSignaledEventAttributes: { signalName: 'operatorResolution' },
        },
        {
          eventTime: { seconds: { toString: () => '200' }, nanos: 0 },
          workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { meta: { updateId: 'u-1' } } },
        },
      ],
    };
    expect(acceptedAtIn(history, { runId: 'r', via: 'signal', signalIndex: 0 })).toBe(100_005);
    expect(acceptedAtIn(history, origin)).toBe(200_000);
    expect(acceptedAtIn(history, { ...origin, updateId: 'u-9' })).toBeNull();
  });
});
