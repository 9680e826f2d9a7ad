// The client of a request (A17, A23), resolved once per request by `clientOrigin` (src/api/app.ts) from the socket
// peer and, only when that peer is one of the profile's `http.trusted_proxies`, X-Forwarded-For (read from the
// right) and X-Forwarded-Proto (src/lib/forwarded.ts). `remoteAddress` is the binding a test passes to
// app.request(). `clientAddress` is the key the throttles count under (an IPv6 client by its /64).
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { HttpSettings } from '../../config/http.js';
import { createOriginResolver, plainAddress, throttleKey, type ClientOrigin } from '../../lib/forwarded.js';

const peerOf = (c: Context) => {
  const env = c.env as { incoming?: IncomingMessage; remoteAddress?: string } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? env?.remoteAddress ?? 'unknown';
};

/** Sets the request's `client` (its address, and whether it came over https per a trusted proxy). */
export function clientOrigin(http: Pick<HttpSettings, 'trusted_proxies'>) {
  const resolve = createOriginResolver(http.trusted_proxies);
  return createMiddleware(async (c, next) => {
    c.set('client' as never, resolve(peerOf(c), c.req.header('x-forwarded-for'), c.req.header('x-forwarded-proto')) as never);
    await next();
  });
}

/** The request's client; without the middleware (a sub-app mounted alone), the socket peer over plain http. */
export function clientOf(c: Context): ClientOrigin {
  return (c.get('client' as never) as ClientOrigin | undefined) ?? { address: plainAddress(peerOf(c)), https: false };
}

/** The throttles' key for the request's client address. */
export const clientAddress = (c: Context): string => throttleKey(clientOf(c).address);

/**
 * The origin clients reach this API at (A23), for links made for them: the profile's `public_url` when set, else
 * this request's (its Host header), https when a trusted proxy says the client used https.
 */
export function publicOrigin(c: Context, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const url = new URL(c.req.url);
  if (clientOf(c).https) url.protocol = 'https:';
  return url.origin;
}
