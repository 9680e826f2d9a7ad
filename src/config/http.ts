// The profile's `http` block (A23): how the API sees its clients behind a proxy. `trusted_proxies` lists the CIDRs
// (IPv4 and IPv6) whose X-Forwarded-For and X-Forwarded-Proto are believed; with none, the socket peer is the
// client and those headers are ignored. `public_url` is the origin clients reach the API at (portal links are made
// on it; https there makes every cookie Secure).
import { isIP } from 'node:net';
import { z } from 'zod';

export interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** "10.0.0.0/8", "fd00::/8" or a bare address (a /32 or /128) → its parts; undefined when it is not one. */
export function parseCidr(text: string): Cidr | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/');
  const version = isIP(address);
  if (!version || extra !== undefined) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

const trustedProxy = z.string().transform((text, ctx) => {
  const cidr = parseCidr(text);
  if (!cidr) ctx.addIssue({ code: 'custom', message: `"${text}" is not an IP address or CIDR (e.g. 10.0.0.0/8, fd00::/8)` });
  else if (cidr.prefix === 0)
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" trusts every address: any client could choose its own with X-Forwarded-For`,
    });
  else return text.trim();
  return z.NEVER;
});

const publicUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://pay.example.com' })
  .refine((text) => ['', '/'].includes(new URL(text).pathname) && !new URL(text).search, {
    message: 'must be an origin (scheme, host, port) without a path or query',
  })
  .transform((text) => new URL(text).origin);

export const httpSchema = z
  .strictObject({
    trusted_proxies: z.array(trustedProxy).max(256).default([]),
    public_url: publicUrl.optional(),
  })
  .prefault({});

export type HttpSettings = z.output<typeof httpSchema>;
