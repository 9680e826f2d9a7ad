// A32: `apipay login` signs a person in through the identity provider by the OAuth 2.0 device flow (openid-client,
// the same maintained library as the console's sign-in): it prints the IdP's page and code, waits while the person
// signs in there (password and second factor, in any browser), and keeps the access token in the CLI's config file
// (mode 0600), never on stdout. The CLI then acts as that person; the admin API verifies the token like any other.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import * as oidc from 'openid-client';
import { configPath, readCliConfig } from './config-file.js';
import { fail, type CliIo } from './io.js';

export const LOGIN_HELP =
  '  apipay login [--issuer URL] [--client-id ID]   sign in through the identity provider (device flow; APIPAY_IDP_ISSUER)';

/** Plain HTTP to the IdP only on a loopback address (the local stack); anything else must be https. */
const loopback = (issuer: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(issuer).hostname);

/** The claims of a JWT's payload (not verified here: the admin API verifies it on every request). */
export function jwtClaims(token: string): { sub?: string; exp?: number; name?: string; preferred_username?: string } {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, never>;
  } catch {
    return {};
  }
}

export async function runLogin(args: string[], io: CliIo): Promise<number> {
  let values: { issuer?: string; 'client-id'?: string };
  try {
    ({ values } = parseArgs({ args, options: { issuer: { type: 'string' }, 'client-id': { type: 'string' } }, strict: true }));
  } catch (error) {
    return fail(io, 'usage', (error as Error).message);
  }
  const issuer = values.issuer ?? io.env.APIPAY_IDP_ISSUER;
  if (!issuer || !URL.canParse(issuer))
    return fail(io, 'usage', "login needs --issuer URL (or APIPAY_IDP_ISSUER): the identity provider's issuer");
  const clientId = values['client-id'] ?? io.env.APIPAY_CLI_CLIENT_ID ?? 'apipay-cli';
  const http = { [oidc.customFetch]: (url: string, options: RequestInit) => io.fetch(url, options) };
  let tokens: oidc.TokenEndpointResponse;
  try {
    const config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), {
      ...http,
      ...(loopback(issuer) ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    Object.assign(config, http);
    const device = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    io.stderr.write(
      `open ${device.verification_uri_complete ?? device.verification_uri} and sign in (code ${device.user_code}); waiting…\n`,
    );
    tokens = await oidc.pollDeviceAuthorizationGrant(config, device, undefined, io.signal ? { signal: io.signal } : {});
  } catch (error) {
    const e = error as { code?: string; error?: string; message?: string };
    if (e.error === 'access_denied') return fail(io, 'forbidden', 'the sign-in was declined at the identity provider');
    if (e.error === 'expired_token')
      return fail(io, 'timeout', 'the code expired before the sign-in finished: run apipay login again');
    return fail(io, 'unavailable', `sign-in through ${issuer} failed: ${String(e.message ?? error).split('\n')[0]}`);
  }
  const path = configPath(io.env);
  let existing = {};
  try {
    existing = readCliConfig(path);
  } catch {
    existing = {}; // a broken file is replaced by the new sign-in
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify({ ...existing, access_token: tokens.access_token, issuer }, null, 2)}\n`, {
    mode: 0o600,
  });
  chmodSync(path, 0o600); // an existing file keeps its mode on write
  const claims = jwtClaims(tokens.access_token);
  io.stdout.write(
    `${JSON.stringify({
      signed_in: claims.name ?? claims.preferred_username ?? claims.sub ?? null,
      subject: claims.sub ?? null,
      issuer,
      expires_at: claims.exp ? new Date(claims.exp * 1000).toISOString() : null,
      config: path,
    })}\n`,
  );
  return 0;
}
