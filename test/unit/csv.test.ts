// I11: the finance CSV: RFC 4180 quoting, formula guard on free text, minor units to decimals by currency.
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
