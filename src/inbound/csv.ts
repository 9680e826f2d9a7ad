// CSV for finance exports: RFC 4180 quoting, formula-injection guard on free text, minor units → decimal.
const MINOR_DIGITS: Record<string, number> = {
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
};

/** "12345" EUR → "123.45"; JPY → "12345"; KWD → "12.345". */
export function minorToDecimal(amountMinor: bigint | string, currency: string): string {
  const digits = MINOR_DIGITS[currency] ?? 2;
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

/** Digits after the decimal point of a currency (ISO 4217 exponent): EUR 2, JPY 0, KWD 3. */
export const currencyExponent = (currency: string): number => MINOR_DIGITS[currency] ?? 2;
