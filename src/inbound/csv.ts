// CSV for finance exports: RFC 4180 quoting, formula-injection guard on free text, minor units → decimal.
import { currencyExponent } from '../shared/currency.js';

export { currencyExponent };

/** "12345" EUR → "123.45"; JPY → "12345"; KWD → "12.345". */
export function minorToDecimal(amountMinor: bigint | string, currency: string): string {
  const digits = currencyExponent(currency);
  const value = BigInt(amountMinor);
  const sign = value < 0n ? '-' : '';
  const abs = (value < 0n ? -value : value).toString().padStart(digits + 1, '0');
  return digits === 0 ? `${sign}${abs}` : `${sign}${abs.slice(0, -digits)}.${abs.slice(-digits)}`;
}

export type CsvValue = string | number | bigint | null | undefined;

/**
 * Free text a spreadsheet would run as a formula (I11, R8): a formula character — ASCII = + - @, their full-width
 * forms ＝＋－＠ and small forms ﹦﹢﹣, which some spreadsheets fold to ASCII — at the start or after any leading
 * whitespace or zero-width characters (spreadsheets trim them); and a leading tab or CR on its own (OWASP).
 */
const FORMULA_START = /^(?:[\s\u200B-\u200D\u2060\uFEFF]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20\uFE66\uFE62\uFE63]|[\t\r])/;

export function csvField(value: CsvValue, { text = false } = {}): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  // Prefixed with ' so that the cell is text: a spreadsheet shows it as written and runs nothing.
  if (text && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvLine(values: CsvValue[], textColumns: ReadonlySet<number> = new Set()): string {
  return values.map((v, i) => csvField(v, { text: textColumns.has(i) })).join(',') + '\r\n';
}
