// Who sent a request, behind proxies (A23). The socket peer is the client unless it is a trusted proxy; then
// X-Forwarded-For is read from the right, each trusted hop skipped, and the first address that is not a trusted
// proxy is the client. Entries left of it were written by that client (or anyone before it) and are never read, so
// a spoofed left-most entry neither hides a client nor names another. X-Forwarded-Proto is believed only from a
// trusted peer (its right-most value: the one the nearest proxy wrote). Pure: no I/O.
import { BlockList, isIP } from 'node:net';
import { parseCidr } from '../config/http.js';

export interface ClientOrigin {
  /** The client's address (IPv4-mapped IPv6 read as IPv4). */
  address: string;
  /** Whether the client's own connection was https, as a trusted proxy says. */
  https: boolean;
}

/** An IPv4-mapped IPv6 address ("::ffff:10.0.0.1") as the IPv4 it is; anything else unchanged (trimmed). */
export function plainAddress(raw: string): string {
  const text = raw.trim();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(text);
  return mapped ? mapped[1]! : text;
}

/** One X-Forwarded-For entry as an address: brackets and a port stripped ("[2001:db8::1]:443", "192.0.2.1:80"). */
function entryAddress(entry: string): string | undefined {
  let text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = plainAddress(text);
  return isIP(text) ? text : undefined;
}

export type OriginResolver = (peer: string, forwardedFor: string | undefined, forwardedProto: string | undefined) => ClientOrigin;

export function createOriginResolver(trustedProxies: readonly string[]): OriginResolver {
  const trusted = new BlockList();
  for (const text of trustedProxies) {
    const cidr = parseCidr(text);
    if (!cidr) throw new Error(`not a CIDR: ${text}`); // the profile schema refused it already
    if (cidr.family === 'ipv4' && cidr.prefix === 32) trusted.addAddress(cidr.address, 'ipv4');
    else trusted.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  const isTrusted = (address: string) => {
    const version = isIP(address);
    return version !== 0 && trusted.check(address, version === 4 ? 'ipv4' : 'ipv6');
  };

  return (rawPeer, forwardedFor, forwardedProto) => {
    const peer = plainAddress(rawPeer);
    if (trustedProxies.length === 0 || !isTrusted(peer)) return { address: peer, https: false };
    let client = peer;
    const hops = (forwardedFor ?? '').split(',').filter((hop) => hop.trim() !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = entryAddress(hops[i]!);
      // A hop a trusted proxy wrote that is no address: the client is the proxy that passed it on (fail closed).
      if (hop === undefined) break;
      client = hop;
      if (!isTrusted(hop)) break;
    }
    const proto = (forwardedProto ?? '').split(',').at(-1)?.trim().toLowerCase();
    return { address: client, https: proto === 'https' };
  };
}

/**
 * The key failures are counted under: an IPv4 address as it is, an IPv6 address by its /64 (the block one host is
 * usually given, so a client cannot take a fresh budget from each of its addresses).
 */
export function throttleKey(address: string): string {
  if (isIP(address) !== 6) return address;
  // A dotted IPv4 tail ("64:ff9b::192.0.2.1") is the last two groups.
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    [
      [a, b],
      [c, d],
    ]
      .map(([x, y]) => ((Number(x) << 8) | Number(y)).toString(16))
      .join(':'),
  );
  const [head = '', tail = ''] = hex.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = hex.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
