// A4: the admin API's request signature (bound to workflow, action, payload and principal; verifiable with a
// previous master key during rotation), attribution from the history, and A5's threshold rule.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonical, signRequest, verifyRequest } from '../../src/access/request-signing.js';
import { authorize, identityIn, type AccessDeps } from '../../src/inbound/resolution-access.js';

const k1 = Buffer.alloc(32, 1);
const k2 = Buffer.alloc(32, 2);
const who = { principal: { keyId: 'apk_alice', name: 'alice', role: 'operator' }, requestId: 'req-1' };
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

  const deps = (viaTemporal: 'allow' | 'deny'): AccessDeps => ({ keys: k1, viaTemporal, identityOf: async () => 'ana@ui' });
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
