// O15, R7: endpoint URLs must be https and resolve only to public addresses (no SSRF into our network), in every
// IPv4 and IPv6 spelling, unless the profile's outbound.allow_insecure_urls allows http and local targets for
// local development (never with NODE_ENV=production, see src/config/profile.ts).
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
  ['192.0.2.0', 24], // documentation (TEST-NET-1..3)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d: never a merchant (R7)
  ['64:ff9b:1::', 48], // NAT64 local-use prefix (RFC 8215): translated inside someone's own network (R7)
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: a tunnel whose far end we cannot vet
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local, deprecated but still routed inside some networks (R7)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address in any textual form (::, a dotted IPv4 tail), or null. */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (isIP(dotted[2]!) !== 4) return null;
    const [a, b, c, d] = dotted[2]!.split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = dotted[1]!.endsWith('::') ? dotted[1]! : dotted[1]!.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const left = parse(halves[0]!);
  const right = halves.length === 2 ? parse(halves[1]!) : [];
  if (![...left, ...right].every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const given = left.length + right.length + tail.length;
  if (halves.length === 2 ? given > 7 : given !== 8) return null;
  const zeros = Array<number>(8 - given).fill(0);
  return [...left.map((g) => parseInt(g, 16)), ...zeros, ...right.map((g) => parseInt(g, 16)), ...tail];
}

const ipv4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
const zero = (groups: number[], from: number, to: number) => groups.slice(from, to).every((g) => g === 0);

/**
 * The IPv4 address an IPv6 address carries and would reach, or null: IPv4-mapped ::ffff:a.b.c.d (also in hex,
 * ::ffff:7f00:1), IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002:AABB:CCDD::/48. (The
 * IPv4-compatible ::a.b.c.d and the NAT64 local-use 64:ff9b:1::/48 are refused whole, in the table above.)
 */
export function embeddedIpv4(groups: number[]): string | null {
  const [g0, g1, g2, , g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  if (zero(groups, 0, 5) && g5 === 0xffff) return ipv4Of(g6, g7);
  if (zero(groups, 0, 4) && g4 === 0xffff && g5 === 0) return ipv4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && zero(groups, 2, 6)) return ipv4Of(g6, g7);
  if (g0 === 0x2002) return ipv4Of(g1, g2);
  return null;
}

/** True when an IP address is loopback, private, link-local, CGNAT, multicast or otherwise not a public target. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, 'ipv4');
  if (family === 6) {
    // A zone (fe80::1%eth0) only makes sense for link-local addresses: refuse rather than strip it.
    if (address.includes('%')) return true;
    const groups = ipv6Groups(address);
    if (!groups) return true;
    if (forbidden.check(address, 'ipv6')) return true;
    const v4 = embeddedIpv4(groups);
    return v4 !== null && forbidden.check(v4, 'ipv4');
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

/**
 * M11: the same policy for a broker destination's sockets (RabbitMQ, Kafka, and every broker a Kafka cluster's
 * metadata names): `host` is refused when it is a forbidden IP literal; `lookup` (net.connect's option) resolves a
 * name and hands the socket only addresses that pass, so the socket connects to exactly what was checked (no
 * rebinding). allowInsecure (development profiles, tests) lets loopback and private brokers through, as for HTTP.
 */
export function brokerSocketGuard(options: UrlSafetyOptions): {
  check(host: string): void;
  lookup: (hostname: string, opts: { all?: boolean; family?: unknown }, cb: (...args: never[]) => void) => void;
} {
  const resolve = options.lookup ?? defaultLookup;
  return {
    check(host) {
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      if (isIP(bare) && !options.allowInsecure && isForbiddenAddress(bare)) {
        throw new UnsafeUrlError('forbidden_address', `broker ${bare} is a loopback, private or link-local address`);
      }
    },
    lookup(hostname, opts, cb) {
      const callback = cb as unknown as (error: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;
      resolve(hostname)
        .then((addresses) => {
          const usable = options.allowInsecure ? addresses : addresses.filter((a) => !isForbiddenAddress(a.address));
          if (addresses.length === 0) return callback(Object.assign(new Error(`host ${hostname} does not resolve`), { code: 'ENOTFOUND' }), '', 0);
          if (usable.length === 0) {
            const error = new UnsafeUrlError('forbidden_address', `broker host ${hostname} resolves to ${addresses[0]!.address}, a loopback, private or link-local address`);
            return callback(Object.assign(error, { code: 'EUNSAFEADDRESS' }), '', 0);
          }
          const fam = (a: { address: string }) => (isIP(a.address) === 6 ? 6 : 4);
          if (opts.all) callback(null, usable.map((a) => ({ address: a.address, family: fam(a) })));
          else callback(null, usable[0]!.address, fam(usable[0]!));
        })
        .catch((error: Error) => callback(error, '', 0));
    },
  };
}
