// I11: the finance CSV: RFC 4180 quoting, formula guard on free text, minor units to decimals by currency.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine, minorToDecimal } from '../../src/inbound/csv.js';

describe('I11 CSV export formatting', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    [null, ''],
    [1250n, '1250'],
  ] as const)('I11 field %s → %s', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('I11 free text that a spreadsheet would run as a formula is exported as text', () => {
    expect(csvField('=SUM(A1)', { text: true })).toBe("'=SUM(A1)");
    expect(csvField('+1', { text: true })).toBe("'+1");
    expect(csvField('-1', { text: false })).toBe('-1');
  });

  it.each([
    [' =SUM(A1)', "' =SUM(A1)"],
    ['\t=1+1', "'\t=1+1"],
    ['\r\n@cmd', `"'\r\n@cmd"`],
    ['\n-2+3', `"'\n-2+3"`],
    ['  +1', "'  +1"],
    ['\u3000=1', "'\u3000=1"], // ideographic space
    ['\u200B=1', "'\u200B=1"], // zero-width space
    ['＝HYPERLINK("http://x")', `"'＝HYPERLINK(""http://x"")"`],
    ['＋1', "'＋1"],
    ['－1', "'－1"],
    ['＠SUM(A1)', "'＠SUM(A1)"],
    ['\t', "'\t"],
    ['a=b', 'a=b'],
    [' plain', ' plain'],
    ['100% refunded', '100% refunded'],
  ])('R8 free text %j is exported as %j', (value, expected) => {
    expect(csvField(value, { text: true })).toBe(expected);
  });

  it('R8 property: no exported text cell starts, after leading whitespace, with a formula character unless prefixed with \'; nothing is lost', () => {
    const FORMULA = /^[=+\-@＝＋－＠]/;
    const tricky = fc.constantFrom(' ', '\t', '\r', '\n', '\u00A0', '\u3000', '\u200B', '\uFEFF', '=', '+', '-', '@', '＝', '＋', '－', '＠', '"', ',', "'", 'a', '1');
    const unit = fc.oneof({ arbitrary: tricky, weight: 4 }, { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 1 });
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 12 }), (value) => {
        const field = csvField(value, { text: true });
        // What a spreadsheet reads as the cell: RFC 4180 unquoted.
        const cell = field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field;
        const trimmed = cell.replace(/^[\s\u200B-\u200D\u2060\uFEFF]+/, '');
        if (FORMULA.test(trimmed) || /^[\t\r]/.test(cell)) expect(cell.startsWith("'")).toBe(true);
        expect(cell.startsWith("'") && !value.startsWith("'") ? cell.slice(1) : cell).toBe(value);
      }),
      { seed: 20261201, numRuns: 2000 },
    );
  });

  it('I11 lines end with CRLF', () => {
    expect(csvLine(['a', 'b,c', null])).toBe('a,"b,c",\r\n');
  });

  it.each([
    ['5', 'EUR', '0.05'],
    ['123456', 'JPY', '123456'],
    ['1005', 'KWD', '1.005'],
    ['-250', 'USD', '-2.50'],
    ['0', 'EUR', '0.00'],
  ])('I11 %s minor units of %s = %s', (minor, currency, decimal) => {
    expect(minorToDecimal(minor, currency)).toBe(decimal);
  });
});
