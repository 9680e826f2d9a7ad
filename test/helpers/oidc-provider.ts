// A30 test helper: a local OpenID Connect provider over real HTTP on 127.0.0.1 (discovery, JWKS, token endpoint)
// for the console's authorization code + PKCE sign-in. The test plays the browser at the authorization endpoint:
// `authorize(url, person)` checks what the console asked for (S256 challenge, state, nonce, redirect URI) and
// answers the code the IdP would have redirected back with. The token endpoint checks the client secret, the code,
// the redirect URI and the PKCE verifier, and returns an ID token signed with jose. `mint` signs an access token for
// the admin API (A26) with the same key, so one person may use both the console and the API.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { IDP_AUDIENCE, IDP_ROLES } from './idp.js';

export const OIDC_CLIENT = { id: 'apipay-console', secret: `console-secret-${randomUUID()}` };

interface Grant {
  challenge: string;
  redirectUri: string;
  nonce: string;
  claims: JWTPayload;
}

export async function startOidcProvider() {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const refusals: string[] = [];
  let issuer = '';
  const server: Server = createServer((req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/.well-known/openid-configuration')
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    if (req.url === '/jwks') return json(200, { keys: [jwk] });
    if (req.url === '/token' && req.method === 'POST') {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(text);
        const grant = grants.get(form.get('code') ?? '');
        grants.delete(form.get('code') ?? ''); // a code works once
        const refuse = (why: string) => (refusals.push(why), json(400, { error: 'invalid_grant', error_description: why }));
        if (form.get('client_id') !== OIDC_CLIENT.id || form.get('client_secret') !== OIDC_CLIENT.secret) return refuse('client');
        if (!grant) return refuse('code');
        if (form.get('redirect_uri') !== grant.redirectUri) return refuse('redirect_uri');
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return refuse('pkce');
        void new SignJWT({ nonce: grant.nonce, ...grant.claims })
          .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
          .setIssuer(issuer)
          .setAudience(OIDC_CLIENT.id)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey)
          .then((idToken) => json(200, { access_token: randomUUID(), token_type: 'Bearer', expires_in: 300, id_token: idToken }));
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    issuer,
    refusals,
    /** The person signs in at `authorizeUrl` (the console's redirect): the callback URL with its code and state. */
    authorize(authorizeUrl: string, claims: JWTPayload): { callback: string; params: URLSearchParams } {
      const url = new URL(authorizeUrl);
      const params = url.searchParams;
      if (`${url.origin}${url.pathname}` !== `${issuer}/authorize`) throw new Error(`not this IdP: ${authorizeUrl}`);
      const code = randomUUID();
      grants.set(code, {
        challenge: params.get('code_challenge') ?? '',
        redirectUri: params.get('redirect_uri') ?? '',
        nonce: params.get('nonce') ?? '',
        claims,
      });
      const callback = new URL(params.get('redirect_uri')!);
      callback.searchParams.set('code', code);
      callback.searchParams.set('state', params.get('state') ?? '');
      return { callback: `${callback.pathname}${callback.search}`, params };
    },
    /** An access token of the admin API's audience for `sub` (exp in 5 min; auth_time now, amr pwd+otp unless given). */
    mint(sub: string, claims: JWTPayload = {}): Promise<string> {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ auth_time: now, amr: ['pwd', 'otp'], groups: ['operator'], ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(IDP_AUDIENCE)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime(now + 300)
        .sign(privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The profile's idp block for a console signing in through `op` (the test client, step-up asks for acr mfa). */
export function consoleIdp(op: { issuer: string }) {
  return {
    issuer: op.issuer,
    audience: IDP_AUDIENCE,
    roles: IDP_ROLES,
    console: { client_id: OIDC_CLIENT.id, client_secret_ref: 'env:TEST_IDP_CONSOLE_SECRET', step_up_acr_values: 'mfa' },
  };
}
