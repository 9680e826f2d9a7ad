// A23: the client behind trusted proxies (src/lib/forwarded.ts) and the profile's `http` block (src/config/http.ts):
// X-Forwarded-For read from the right through trusted hops only, the socket peer when there are none, and
// fast-check properties that no entry a client can write left of its own address changes who it is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../src/config/http.js';
import { createOriginResolver, throttleKey } from '../../src/lib/forwarded.js';
import { testProfile } from '../helpers/profile.js';

const TRUSTED = ['10.0.0.0/8', '192.168.1.1', 'fd00::/8'];
const resolve = createOriginResolver(TRUSTED);

describe('A23 X-Forwarded-For through trusted proxies', () => {
  it.each([
    ['untrusted peer: its XFF is ignored', '203.0.113.5', '198.51.100.1', '203.0.113.5'],
    ['trusted peer: the right-most entry', '10.1.2.3', '198.51.100.1, 203.0.113.9', '203.0.113.9'],
    ['trusted hops skipped from the right', '10.1.2.3', '203.0.113.9, 192.168.1.1, 10.9.9.9', '203.0.113.9'],
    ['a spoofed left-most entry is never read', '10.1.2.3', '10.0.0.1, 203.0.113.9, 10.9.9.9', '203.0.113.9'],
    ['every hop trusted: the left-most', '10.1.2.3', '10.0.0.1, 10.0.0.2', '10.0.0.1'],
    ['trusted peer without XFF: the peer', '10.1.2.3', undefined, '10.1.2.3'],
    ['a junk hop: the proxy that passed it on', '10.1.2.3', '203.0.113.9, not-an-ip, 10.9.9.9', '10.9.9.9'],
    ['IPv4-mapped peer reads as IPv4', '::ffff:10.1.2.3', '203.0.113.9', '203.0.113.9'],
    ['IPv6 proxy and client, bracketed with a port', 'fd00::1', '[2001:db8::7]:443', '2001:db8::7'],
    ['IPv4 entry with a port', '10.1.2.3', '203.0.113.9:51000', '203.0.113.9'],
    ['a trusted /32 entry', '192.168.1.1', '203.0.113.9', '203.0.113.9'],
    ['a neighbour of the /32 is not trusted', '192.168.1.2', '203.0.113.9', '192.168.1.2'],
  ])('%s', (_, peer, xff, client) => {
    expect(resolve(peer, xff, undefined).address).toBe(client);
  });

  it('X-Forwarded-Proto is believed from a trusted peer only, its right-most value', () => {
    expect(resolve('10.1.2.3', '203.0.113.9', 'https').https).toBe(true);
    expect(resolve('10.1.2.3', '203.0.113.9', 'http, https').https).toBe(true);
    expect(resolve('10.1.2.3', '203.0.113.9', 'https, http').https).toBe(false);
    expect(resolve('203.0.113.9', undefined, 'https').https).toBe(false);
  });

  it('with no trusted proxies the socket peer is the client, whatever the headers say', () => {
    const none = createOriginResolver([]);
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string())), (peer, xff) => {
        const origin = none(peer, xff.join(', '), 'https');
        expect(origin).toEqual({ address: peer.replace(/^::ffff:(?=\d+\.)/i, ''), https: false });
      }),
    );
  });

  it('property: entries left of the first untrusted address (what a client can write) never change the result', () => {
    const trustedHop = fc.oneof(
      fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
      fc.constant('192.168.1.1'),
    );
    const untrusted = fc
      .tuple(fc.integer({ min: 11, max: 126 }), fc.nat(255), fc.nat(255))
      .map(([a, b, c]) => `${a}.${b}.${c}.9`);
    const anything = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.string({ maxLength: 20 }).filter((s) => !s.includes(',')),
    );
    fc.assert(
      fc.property(
        trustedHop,
        fc.array(trustedHop, { maxLength: 4 }),
        untrusted,
        fc.array(anything, { maxLength: 6 }),
        (peer, chain, client, spoofed) => {
          const honest = [client, ...chain].join(', ');
          const withSpoof = [...spoofed, client, ...chain].join(', ');
          expect(resolve(peer, honest, undefined).address).toBe(client);
          expect(resolve(peer, withSpoof, undefined).address).toBe(client);
        },
      ),
    );
  });

  it('property: an untrusted peer is its own client whatever it sends', () => {
    const untrustedPeer = fc.ipV4().filter((ip) => !ip.startsWith('10.') && ip !== '192.168.1.1');
    fc.assert(
      fc.property(untrustedPeer, fc.array(fc.oneof(fc.ipV4(), fc.ipV6()), { maxLength: 6 }), (peer, xff) => {
        expect(resolve(peer, xff.join(','), 'https')).toEqual({ address: peer, https: false });
      }),
    );
  });
});

describe('A23 failures count per IPv4 address and per IPv6 /64', () => {
  it('every address of one /64 has one key; another /64 another', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }), (tail) => {
        const host = tail.map((g) => g.toString(16)).join(':');
        expect(throttleKey(`2001:db8:1:2:${host}`)).toBe('2001:db8:1:2::/64');
      }),
    );
    expect(throttleKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(throttleKey('203.0.113.7')).toBe('203.0.113.7');
  });
});

describe('A23 profile http block', () => {
  it('parses CIDRs and bare addresses, IPv4 and IPv6', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 'ipv4' });
    expect(parseCidr('fd00::/8')).toEqual({ address: 'fd00::', prefix: 8, family: 'ipv6' });
    expect(parseCidr('192.0.2.1')).toEqual({ address: '192.0.2.1', prefix: 32, family: 'ipv4' });
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0/8', 'proxy.local', '10.0.0.0/8/1', '10.0.0.0/x'])
      expect(parseCidr(bad)).toBeUndefined();
  });

  it('defaults to no trusted proxies and no public_url; refuses a bad CIDR, a /0 and a URL with a path, naming the key', () => {
    expect(testProfile().http).toEqual({ trusted_proxies: [] });
    expect(testProfile({ http: { public_url: 'https://pay.example.com/' } }).http.public_url).toBe('https://pay.example.com');
    expect(() => testProfile({ http: { trusted_proxies: ['10.0.0.0/8', 'proxy'] } })).toThrow(
      /http\.trusted_proxies\.1: "proxy" is not an IP address or CIDR/,
    );
    expect(() => testProfile({ http: { trusted_proxies: ['0.0.0.0/0'] } })).toThrow(
      /http\.trusted_proxies\.0: "0\.0\.0\.0\/0" trusts every address/,
    );
    expect(() => testProfile({ http: { trusted_proxies: ['::/0'] } })).toThrow(/trusts every address/);
    expect(() => testProfile({ http: { public_url: 'https://pay.example.com/app' } })).toThrow(
      /http\.public_url: must be an origin/,
    );
    expect(() => testProfile({ http: { public_url: 'ftp://pay.example.com' } })).toThrow(/http\.public_url/);
  });
});
