// A31: the service token ApiPay's processes send to a Temporal frontend that authorizes IdP tokens (scripts/go/
// temporal-server): an OAuth 2.0 client-credentials token (RFC 6749 §4.4) of the service client TEMPORAL_OIDC_CLIENT_ID,
// fetched at start and again at 70 % of its lifetime (a failed refresh keeps the last token and retries in 5 s).
// The secret and the tokens are never logged. Unset TEMPORAL_OIDC_TOKEN_URL: no token (the dev server, start-dev).
import type { Env } from '../config/env.js';

export interface ServiceToken {
  /** The latest token ('' until the first one arrived). */
  current(): string;
  /** Resolves with the first token (rejects when the first fetch failed; refreshing goes on). */
  ready: Promise<string>;
  /** Called with each new token (NativeConnection.setApiKey: its key is a value, not a callback). */
  onRefresh(listener: (token: string) => unknown): void;
  stop(): void;
}

export interface ServiceTokenOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  fetch?: typeof fetch;
  onError?: (message: string) => void;
  retryMs?: number;
}

export function startServiceToken(options: ServiceTokenOptions): ServiceToken {
  const doFetch = options.fetch ?? fetch;
  const retryMs = options.retryMs ?? 5_000;
  const listeners: Array<(token: string) => unknown> = [];
  let token = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => void refresh().catch(() => undefined), ms);
    timer.unref();
  };
  const refresh = async (): Promise<string> => {
    try {
      const res = await doFetch(options.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: options.clientId,
          client_secret: options.clientSecret,
        }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown };
      if (!res.ok || typeof body.access_token !== 'string')
        throw new Error(`the token endpoint answered ${res.status} for client ${options.clientId}`);
      token = body.access_token;
      const lifetimeS = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 300;
      schedule(Math.max(1_000, lifetimeS * 700));
      for (const listener of listeners) await Promise.resolve(listener(token)).catch(() => undefined);
      return token;
    } catch (err) {
      options.onError?.(`Temporal service token: ${err instanceof Error ? err.message : String(err)}; retrying in ${retryMs} ms`);
      schedule(retryMs);
      throw err;
    }
  };
  const ready = refresh();
  ready.catch(() => undefined);
  return {
    current: () => token,
    ready,
    onRefresh: (listener) => void listeners.push(listener),
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The process's service token from its environment, or null when TEMPORAL_OIDC_TOKEN_URL is unset. */
export function serviceTokenFromEnv(
  env: Pick<Env, 'TEMPORAL_OIDC_TOKEN_URL' | 'TEMPORAL_OIDC_CLIENT_ID' | 'TEMPORAL_OIDC_CLIENT_SECRET'>,
  onError: (message: string) => void,
): ServiceToken | null {
  if (!env.TEMPORAL_OIDC_TOKEN_URL) return null;
  return startServiceToken({
    tokenUrl: env.TEMPORAL_OIDC_TOKEN_URL,
    clientId: env.TEMPORAL_OIDC_CLIENT_ID ?? '',
    clientSecret: env.TEMPORAL_OIDC_CLIENT_SECRET ?? '',
    onError,
  });
}
