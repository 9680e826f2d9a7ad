// R7 properties: a private, loopback or link-local IPv4 address is refused in every IPv6 form that embeds it, as an
// address (what DNS may answer) and as a URL literal (what a merchant may register); public ones pass in the
// forms that carry them. Fixed seed and bounded runs here; a failure prints its seed and counterexample.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isForbiddenAddress, UnsafeUrlError } from '../../src/outbound/url-safety.js';

const SEED = 20261201;
const RUNS = 300;

// Written from the RFCs, not copied from the module under test.
const PRIVATE_V4: Array<[number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10
  [0x7f000000, 8], // 127/8
  [0xa9fe0000, 16], // 169.254/16
  [0xac100000, 12], // 172.16/12
  [0xc0a80000, 16], // 192.168/16
];

const privateV4 = fc
  .tuple(fc.constantFrom(...PRIVATE_V4), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([[net, prefix], host]) => (net | (host & (2 ** (32 - prefix) - 1))) >>> 0);
const publicV4 = fc.constantFrom(0x08080808, 0x01010101, 0x5db8d822, 0xd83ad5ae); // 8.8.8.8, 1.1.1.1, 93.184.216.34, 216.58.213.174

const dotted = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
const hex = (v: number, pad: boolean, upper: boolean) => {
  const g = (n: number) => (pad ? n.toString(16).padStart(4, '0') : n.toString(16));
  const text = `${g(v >>> 16)}:${g(v & 0xffff)}`;
  return upper ? text.toUpperCase() : text;
};
const group = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));

/** Every IPv6 form that embeds the IPv4 address `v` (each with optional zero padding and upper case). */
const embedded = (v4: fc.Arbitrary<number>, forms: readonly string[]) =>
  fc.tuple(v4, fc.constantFrom(...forms), fc.boolean(), fc.boolean(), group, group).map(([v, form, pad, upper, a, b]) => {
    const h = hex(v, pad, upper);
    const z = pad ? '0000' : '0';
    switch (form) {
      case 'mapped-dotted': return `::ffff:${dotted(v)}`;
      case 'mapped-hex': return `::${upper ? 'FFFF' : 'ffff'}:${h}`;
      case 'mapped-full': return `${z}:${z}:${z}:${z}:${z}:ffff:${h}`;
      case 'compatible-dotted': return `::${dotted(v)}`;
      case 'compatible-hex': return `::${h}`;
      case 'translated': return `::ffff:0:${dotted(v)}`;
      case 'nat64-dotted': return `64:ff9b::${dotted(v)}`;
      case 'nat64-hex': return `64:ff9b::${h}`;
      case 'nat64-local': return `64:ff9b:1:${a}::${h}`;
      case 'sixtofour': return `2002:${h}:${a}::${b}`;
      default: throw new Error(form);
    }
  });

const ALL_FORMS = ['mapped-dotted', 'mapped-hex', 'mapped-full', 'compatible-dotted', 'compatible-hex', 'translated', 'nat64-dotted', 'nat64-hex', 'nat64-local', 'sixtofour'] as const;
// The forms that carry an IPv4 address to where it points; the others are refused whatever they embed.
const CARRYING_FORMS = ['mapped-dotted', 'mapped-hex', 'mapped-full', 'translated', 'nat64-dotted', 'nat64-hex', 'sixtofour'] as const;

async function refusal(url: string): Promise<string> {
  try {
    await checkEndpointUrl(url, { allowInsecure: false });
    return 'ok';
  } catch (error) {
    return error instanceof UnsafeUrlError ? error.reason : 'other error';
  }
}

describe('R7 properties', () => {
  it('R7 any private IPv4 in any embedded IPv6 form is a forbidden address', () => {
    fc.assert(
      fc.property(embedded(privateV4, ALL_FORMS), (address) => isForbiddenAddress(address)),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('R7 ... and refused as an https URL literal, whatever the URL parser makes of it', async () => {
    await fc.assert(
      fc.asyncProperty(embedded(privateV4, ALL_FORMS), async (address) => {
        expect(await refusal(`https://[${address}]/hook`)).toBe('forbidden_address');
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('R7 the same forms of a public IPv4 are allowed where they carry it (mapped, NAT64 /96, 6to4)', () => {
    fc.assert(
      fc.property(embedded(publicV4, CARRYING_FORMS), (address) => !isForbiddenAddress(address)),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
