// A31: the processes' Temporal service token (src/lib/temporal-token.ts) against a fake token endpoint: the
// client-credentials form, a refresh before expiry reaching the listeners, a refused first fetch that names no
// secret and is retried, and the environment check that wants the client with the token URL.
import { describe, expect, it } from 'vitest';
import { startServiceToken } from '../../src/lib/temporal-token.js';
import { parseEnv } from '../../src/config/env.js';

function fakeEndpoint(answers: Array<{ status: number; body: object }>) {
  const forms: URLSearchParams[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    forms.push(new URLSearchParams(String(init.body)));
    const answer = answers[Math.min(forms.length - 1, answers.length - 1)]!;
    return new Response(JSON.stringify(answer.body), { status: answer.status });
  }) as typeof globalThis.fetch;
  return { fetch, forms };
}

const required = { ADMIN_TOKEN: 'a'.repeat(24), SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

describe('A31 Temporal service token', () => {
  it('fetches by client credentials and refreshes before expiry', async () => {
    const peer = fakeEndpoint([
      { status: 200, body: { access_token: 't1', expires_in: 1.5 } },
      { status: 200, body: { access_token: 't2', expires_in: 300 } },
    ]);
    const source = startServiceToken({
      tokenUrl: 'http://idp.test/token',
      clientId: 'svc',
      clientSecret: 's3cret',
      fetch: peer.fetch,
    });
    const seen: string[] = [];
    source.onRefresh((t) => seen.push(t));
    expect(await source.ready).toBe('t1');
    expect(source.current()).toBe('t1');
    expect(Object.fromEntries(peer.forms[0]!)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'svc',
      client_secret: 's3cret',
    });
    await new Promise((r) => setTimeout(r, 1_400));
    expect(source.current()).toBe('t2');
    expect(seen.at(-1)).toBe('t2'); // a listener added before the first answer also saw t1
    source.stop();
  });

  it('a refused fetch names no secret, keeps trying and then succeeds', async () => {
    const peer = fakeEndpoint([
      { status: 401, body: { error: 'unauthorized_client' } },
      { status: 200, body: { access_token: 'ok', expires_in: 300 } },
    ]);
    const errors: string[] = [];
    const source = startServiceToken({
      tokenUrl: 'http://idp.test/token',
      clientId: 'svc',
      clientSecret: 's3cret',
      fetch: peer.fetch,
      retryMs: 50,
      onError: (m) => errors.push(m),
    });
    await expect(source.ready).rejects.toThrow(/401/);
    expect(errors.join(' ')).not.toContain('s3cret');
    await new Promise((r) => setTimeout(r, 200));
    expect(source.current()).toBe('ok');
    source.stop();
  });

  it('the environment wants the client id and secret with the token URL', () => {
    expect(() => parseEnv({ ...required, TEMPORAL_OIDC_TOKEN_URL: 'http://idp.test/token' })).toThrow(/TEMPORAL_OIDC_CLIENT_ID/);
    const env = parseEnv({
      ...required,
      TEMPORAL_OIDC_TOKEN_URL: 'http://idp.test/token',
      TEMPORAL_OIDC_CLIENT_ID: 'svc',
      TEMPORAL_OIDC_CLIENT_SECRET: 'x',
    });
    expect(env.TEMPORAL_OIDC_CLIENT_ID).toBe('svc');
  });
});
