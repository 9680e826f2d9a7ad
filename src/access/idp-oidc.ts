// A30: the console's sign-in through the identity provider: OpenID Connect authorization code with PKCE (S256), a
// state and a nonce, by `openid-client` (no hand-written OAuth). `start` makes the IdP's authorization URL and what
// the callback must check; `finish` exchanges the code, lets openid-client check the state, PKCE, the ID token's
// issuer, audience, nonce and (on step-up) auth_time against max_age, and names the person by the ID token's
// claims with the same group → role table as the admin API's tokens (principalOfClaims). Step-up (A27) asks the
// IdP to authenticate again: prompt=login, max_age=0 and the profile's acr_values. Provider-neutral.
import * as oidc from 'openid-client';
import type { IdpConfig } from '../config/idp.js';
import { principalOfClaims, type IdpVerdict } from './idp-tokens.js';

/** What the callback must find again (kept by the caller in a signed, short-lived cookie). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  verifier: string;
  /** The console path to return to after the sign-in. */
  returnTo: string;
  stepUp: boolean;
}

export class IdpSignInError extends Error {
  override name = 'IdpSignInError';
  constructor(
    message: string,
    readonly unavailable = false,
  ) {
    super(message);
  }
}

/** Plain HTTP to the IdP only on a loopback address (the local stack); anything else must be https. */
const loopback = (issuer: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(issuer).hostname);

export function createConsoleOidc(idp: IdpConfig, options: { fetch?: typeof fetch } = {}) {
  const client = idp.console;
  if (!client) throw new Error('idp.console is not configured');
  let configuration: Promise<oidc.Configuration> | undefined;
  const discover = () =>
    (configuration ??= oidc
      .discovery(new URL(idp.issuer), client.client_id, undefined, oidc.ClientSecretPost(client.client_secret_ref), {
        ...(loopback(idp.issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
        ...(options.fetch ? { [oidc.customFetch]: options.fetch as oidc.CustomFetch } : {}),
        timeout: 5,
      })
      .catch((error: unknown) => {
        configuration = undefined;
        throw new IdpSignInError(`the identity provider cannot be reached (${(error as Error).message})`, true);
      }));

  return {
    /** The authorization URL to send the browser to, and what the callback must check. */
    async start(redirectUri: string, returnTo: string, stepUp: boolean): Promise<{ url: string; pending: PendingSignIn }> {
      const config = await discover();
      const verifier = oidc.randomPKCECodeVerifier();
      const pending: PendingSignIn = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier, returnTo, stepUp };
      const params: Record<string, string> = {
        redirect_uri: redirectUri,
        scope: client.scope,
        response_type: 'code',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
      };
      // A27 step-up: a fresh sign-in with the second factor, whatever session the IdP still has.
      if (stepUp) Object.assign(params, { prompt: 'login', max_age: '0' });
      if (stepUp && client.step_up_acr_values) params.acr_values = client.step_up_acr_values;
      return { url: oidc.buildAuthorizationUrl(config, params).href, pending };
    },

    /** The callback: the code for tokens, the ID token checked, and the person it names (or why not). */
    async finish(callbackUrl: URL, pending: PendingSignIn): Promise<IdpVerdict> {
      const config = await discover();
      let claims: oidc.IDToken | undefined;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: pending.verifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
          // Step-up: the ID token's auth_time must be within the approval window (openid-client checks it).
          ...(pending.stepUp ? { maxAge: Math.max(1, Math.round(idp.approval_max_age / 1000)) } : {}),
        });
        claims = tokens.claims();
      } catch (error) {
        const code = (error as { code?: string; error?: string }).error ?? (error as { code?: string }).code ?? 'invalid';
        return { ok: false, problem: `the identity provider's sign-in did not complete (${code})` };
      }
      if (!claims) return { ok: false, problem: 'the identity provider returned no ID token' };
      return principalOfClaims(idp, claims);
    },
  };
}

export type ConsoleOidc = ReturnType<typeof createConsoleOidc>;
