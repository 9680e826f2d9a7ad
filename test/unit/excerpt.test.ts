// R3: a merchant's response excerpt and any library message are storable PostgreSQL text, whatever the bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { excerptText, storableText } from '../../src/outbound/excerpt.js';

const SEED = 20261201;
// What PostgreSQL refuses in text (U+0000; lone surrogates cannot be encoded as UTF-8) or a terminal would act on.
const UNSAFE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// Any UTF-16 code unit, so lone surrogates occur, plus whole astral characters.
const utf16Unit = fc.oneof(fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), fc.constantFrom('\u{1F600}', '\u{10FFFF}'));

describe('R3 excerptText / storableText', () => {
  it.each([
    [[0x6f, 0x6b, 0x00, 0x21], false, 'ok\uFFFD!'],
    [[0xff, 0x41], false, '\uFFFDA'],
    [[0xe2, 0x82], false, '\uFFFD'], // a body that ends inside a character: invalid
    [[0x41, 0xe2, 0x82], true, 'A'], // cut by our cap inside a character: the half is dropped
    [[0x1b, 0x5b, 0x33, 0x31, 0x6d], false, '\uFFFD[31m'],
    [[0x09, 0x0a, 0x0d], false, '\t\n\r'],
    [[0xef, 0xbb, 0xbf, 0x41], false, '\uFEFFA'], // a BOM is kept as it came
  ])('R3 %j (truncated %s) → %j', (bytes, truncated, expected) => {
    expect(excerptText(Uint8Array.from(bytes), truncated)).toBe(expected);
  });

  it('R3 property: any bytes become safe text of at most as many characters and 3 × as many UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), fc.boolean(), (bytes, truncated) => {
        const text = excerptText(bytes, truncated);
        expect(text).not.toMatch(UNSAFE);
        expect(text.length).toBeLessThanOrEqual(bytes.length);
        expect(Buffer.byteLength(text)).toBeLessThanOrEqual(3 * bytes.length);
        expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text); // round-trips: valid UTF-8
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('R3 property: any string (lone surrogates, NUL, controls) becomes safe text of at most maxChars', () => {
    fc.assert(
      fc.property(fc.string({ unit: utf16Unit, maxLength: 400 }), fc.integer({ min: 2, max: 300 }), (input, max) => {
        const text = storableText(input, max);
        expect(text).not.toMatch(UNSAFE);
        expect(text.length).toBeLessThanOrEqual(max);
        if (!UNSAFE.test(input) && input.length <= max) expect(text).toBe(input);
      }),
      { seed: SEED, numRuns: 500 },
    );
  });
});
