// The address a request came from (A17): the TCP peer of the node server's socket. X-Forwarded-For is not trusted
// (anyone can send it); behind a proxy every request shares the proxy's address, which the throttles then treat as
// one client. `remoteAddress` is the binding a test passes to app.request(). IPv4-mapped IPv6 reads as IPv4, and an
// IPv6 address counts by its /64, the block one host is usually given.
import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import type { Context } from 'hono';

export function clientAddress(c: Context): string {
  const env = c.env as { incoming?: IncomingMessage; remoteAddress?: string } | undefined;
  const raw = env?.incoming?.socket?.remoteAddress ?? env?.remoteAddress ?? 'unknown';
  if (raw.startsWith('::ffff:') && raw.includes('.')) return raw.slice(7);
  if (!isIPv6(raw)) return raw;
  const [head = '', tail = ''] = raw.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = raw.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
