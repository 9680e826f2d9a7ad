// ISO 4217 exponents (digits after the decimal point) and the conversions between major and minor units that the
// finance exports (I11) and the money policy's limits (A11, A22) share: EUR 2, JPY 0, KWD 3; 2 for a code not listed.
// prettier-ignore
const MINOR_DIGITS: Readonly<Record<string, number>> = {
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
};

/** Digits after the decimal point of a currency (ISO 4217 exponent): EUR 2, JPY 0, KWD 3. */
export const currencyExponent = (currency: string): number =>
  Object.hasOwn(MINOR_DIGITS, currency) ? MINOR_DIGITS[currency]! : 2;

/** A non-negative decimal amount in major units as the profile writes it: `1000`, `1000.5`, `"250.125"`. */
export const MAJOR_AMOUNT = /^(0|[1-9]\d{0,17})(\.\d{1,6})?$/;

/**
 * A22: `major` (a MAJOR_AMOUNT) in the minor units of `currency`, rounded down (a limit never grows by rounding):
 * 1000 → EUR 100000, JPY 1000, KWD 1000000; 0.005 → EUR 0.
 */
export function majorToMinor(major: string, currency: string): bigint {
  const match = MAJOR_AMOUNT.exec(major);
  if (!match) throw new RangeError(`${JSON.stringify(major)} is not a non-negative decimal amount`);
  const fraction = (match[2] ?? '.').slice(1);
  const digits = BigInt(match[1]! + fraction);
  const exponent = BigInt(currencyExponent(currency) - fraction.length);
  return exponent >= 0n ? digits * 10n ** exponent : digits / 10n ** -exponent;
}

/** `minor` of `from` in the minor units of `to` at the same major amount, rounded down: 500 EUR (5.00) → 5 JPY. */
export function rescaleMinor(minor: bigint, from: string, to: string): bigint {
  const shift = BigInt(currencyExponent(to) - currencyExponent(from));
  return shift >= 0n ? minor * 10n ** shift : minor / 10n ** -shift;
}

/** True when `a` minor units of `currencyA` are less than `b` of `currencyB` in major units. */
export function majorLess(a: bigint, currencyA: string, b: bigint, currencyB: string): boolean {
  return a * 10n ** BigInt(currencyExponent(currencyB)) < b * 10n ** BigInt(currencyExponent(currencyA));
}
