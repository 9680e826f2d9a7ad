// A29: the verifier over a faked HTTP peer (the issuer): a fetch that fails (refused, 500, not a key set) is
// `unavailable` with a Retry-After and one report; within IDP_RETRY_SECONDS nothing is fetched again; after it, a
// recovered issuer verifies the same token. A key id the JWKS lacks stays the token's fault (not unavailable).
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createIdpVerifier, IDP_RETRY_SECONDS } from '../../src/access/idp-tokens.js';
import { idpSchema } from '../../src/config/idp.js';

const issuer = 'https://idp.example.test/realms/apipay';
const config = idpSchema.parse({ issuer, audience: 'apipay-admin-api', roles: { operator: 'operator' } });

async function setUp() {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
  const sign = (kid: string) =>
    new SignJWT({ groups: ['operator'] })
      .setProtectedHeader({ alg: 'ES256', kid })
      .setIssuer(issuer)
      .setAudience('apipay-admin-api')
      .setSubject('p1')
      .setExpirationTime('5m')
      .sign(privateKey);
  return { jwks, sign };
}

type Peer = 'up' | 'refused' | 'jwks-500' | 'jwks-garbage';

function fakeIssuer(jwks: object) {
  let state: Peer = 'up';
  let calls = 0;
  const fetchImpl = (async (input: string | URL | Request) => {
    calls++;
    const url = String(input instanceof Request ? input.url : input);
    if (state === 'refused') throw new TypeError('fetch failed');
    if (url.endsWith('/.well-known/openid-configuration')) return Response.json({ issuer, jwks_uri: `${issuer}/certs` });
    if (state === 'jwks-500') return new Response('down', { status: 500 });
    if (state === 'jwks-garbage') return Response.json({ not: 'a key set' });
    return Response.json(jwks);
  }) as typeof fetch;
  return { fetchImpl, set: (s: Peer) => (state = s), calls: () => calls };
}

// ES256 keys: an RSA key pair per case took seconds on a loaded machine and timed the file out.
describe('A29 an unreachable identity provider', { timeout: 30_000 }, () => {
  for (const failure of ['refused', 'jwks-500', 'jwks-garbage'] as const) {
    it(`A29 ${failure}: unavailable with Retry-After, no refetch within the window, verifies once the issuer is back`, async () => {
      const { jwks, sign } = await setUp();
      const peer = fakeIssuer(jwks);
      let clock = 1_000_000;
      const reports: string[] = [];
      const verifier = createIdpVerifier(config, {
        fetch: peer.fetchImpl,
        now: () => clock,
        onUnreachable: (reason) => reports.push(reason),
      });
      const token = await sign('k1');
      peer.set(failure);
      const first = await verifier.verify(token);
      expect(first).toMatchObject({ ok: false, unavailable: true, retryAfterSeconds: IDP_RETRY_SECONDS });
      expect(reports).toHaveLength(1);
      expect(reports[0]).not.toContain(token);
      const calls = peer.calls();
      clock += 2000;
      expect(await verifier.verify(token)).toMatchObject({
        ok: false,
        unavailable: true,
        retryAfterSeconds: IDP_RETRY_SECONDS - 2,
      });
      expect(peer.calls()).toBe(calls);
      expect(reports).toHaveLength(1);
      peer.set('up');
      clock += IDP_RETRY_SECONDS * 1000;
      const back = await verifier.verify(token);
      expect(back.ok).toBe(true);
    });
  }

  it('A29 a key id the issuer does not publish is the token’s fault (401), not an outage', async () => {
    const { jwks, sign } = await setUp();
    const peer = fakeIssuer(jwks);
    const verifier = createIdpVerifier(config, { fetch: peer.fetchImpl });
    expect((await verifier.verify(await sign('k1'))).ok).toBe(true);
    const unknown = await verifier.verify(await sign('k-unknown'));
    expect(unknown).toMatchObject({ ok: false });
    expect(unknown).not.toHaveProperty('unavailable', true);
  });
});
