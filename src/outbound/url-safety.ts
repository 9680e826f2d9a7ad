// O15: endpoint URLs must be https and resolve only to public addresses (no SSRF into our network), unless the
// profile's outbound.allow_insecure_urls allows http and local targets for local development.
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export type UnsafeUrlReason = 'invalid_url' | 'scheme_not_allowed' | 'credentials_in_url' | 'unresolvable_host' | 'forbidden_address';

export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
  constructor(
    readonly reason: UnsafeUrlReason,
    message: string,
  ) {
    super(message);
  }
}

export type LookupAll = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface UrlSafetyOptions {
  allowInsecure: boolean;
  /** Resolver, injectable for tests; default `dns.promises.lookup(host, { all: true })`. */
  lookup?: LookupAll;
}

const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fe80::', 10], // link-local
  ['fc00::', 7], // unique-local
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** An IPv4 address carried inside IPv6 (::ffff:a.b.c.d, ::ffff:0a00:0001, NAT64 64:ff9b::/96), or null. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** True when an IP address is loopback, private, link-local, CGNAT, multicast or otherwise not a public target. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return isIP(v4) !== 4 || forbidden.check(v4, 'ipv4');
    return forbidden.check(address, 'ipv6');
  }
  return true; // not an IP address at all: refuse rather than guess
}

const defaultLookup: LookupAll = (host) => dns.lookup(host, { all: true, verbatim: true });

/** An address a URL was checked against: the send-time POST connects to one of these and nowhere else. */
export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Checks the URL and returns the addresses it was checked against, or null when none were (allowInsecure and, at
 * registration or when the name does not resolve, no lookup). `resolve` asks DNS even under allowInsecure so that
 * a send-time POST can be pinned in every profile; strict profiles always resolve and require an answer.
 */
async function vet(url: string, options: UrlSafetyOptions, resolve: boolean): Promise<VettedAddress[] | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeUrlError('invalid_url', 'not a valid absolute URL');
  }
  const allowed = options.allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(parsed.protocol)) {
    throw new UnsafeUrlError('scheme_not_allowed', `scheme ${parsed.protocol.replace(':', '')} is not allowed; use https`);
  }
  if (parsed.username || parsed.password) {
    throw new UnsafeUrlError('credentials_in_url', 'credentials in the URL are not allowed');
  }

  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host);
  let addresses: Array<{ address: string; family: number }>;
  if (literal) {
    addresses = [{ address: host, family: literal }];
  } else if (options.allowInsecure && !resolve) {
    return null; // local development: loopback and private receivers are expected, and may not resolve yet
  } else {
    try {
      addresses = await (options.lookup ?? defaultLookup)(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      // Under allowInsecure the POST resolves for itself and fails as a connection error, as it always has.
      if (options.allowInsecure) return null;
      throw new UnsafeUrlError('unresolvable_host', `host ${host} does not resolve`);
    }
  }
  if (!options.allowInsecure) {
    // Every address must be public: a name with one private A record could be steered there.
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) {
      throw new UnsafeUrlError('forbidden_address', `host ${host} resolves to ${bad.address}, a loopback, private or link-local address`);
    }
  }
  return addresses.map((a) => ({ address: a.address, family: isIP(a.address) === 6 ? 6 : 4 }));
}

/** Registration: throws UnsafeUrlError when the URL may not receive webhooks; resolves when it may. */
export async function checkEndpointUrl(url: string, options: UrlSafetyOptions): Promise<void> {
  await vet(url, options, false);
}

/**
 * Send time: the same check, returning the addresses it vetted (null: nothing to pin, see vet) so that the POST
 * connects to exactly those (src/outbound/pinned-agents.ts) instead of resolving the name a second time — a
 * second answer could be 127.0.0.1 (DNS rebinding).
 */
export function vetEndpointUrl(url: string, options: UrlSafetyOptions): Promise<VettedAddress[] | null> {
  return vet(url, options, true);
}
