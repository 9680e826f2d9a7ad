// C12, C13: the numbers and colours of the console's charts: the palette a chart may use, the axis top (1, 2 or 5
// × 10^k), figures in short form (1.2k, 3.5 min) and the two guards that keep NaN out of the markup. Pure: no I/O,
// no clock. svg.ts draws with them; sparkline.ts too.

/** The colours charts may use; failures are the reds. */
export const PALETTE = {
  ok: '#2e9e5b',
  clientError: '#e0a100',
  serverError: '#d12c2c',
  timeout: '#8a1616',
  other: '#8c6d9e',
  blue: '#2456c7',
  orange: '#e8710a',
  teal: '#138a8a',
  grey: '#8a93a5',
  pink: '#c2185b',
  /** C17: the bands behind the series, light so the bars stay readable and never taken for a 5xx series. */
  outageBand: '#f7d4d4',
  rampBand: '#cdebe6',
} as const;
const COLORS = new Set<string>(Object.values(PALETTE));
/** A colour of the palette, or grey for anything else (a colour never comes from input unchecked). */
export const colorOf = (c: string) => (COLORS.has(c) ? c : PALETTE.grey);

/** A finite value or null. */
export const clean = (v: number | null | undefined): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** A coordinate: finite, two decimals. */
export const px = (v: number) => (Number.isFinite(v) ? Math.round(v * 100) / 100 : 0);

/** The smallest 1, 2 or 5 × 10^k at or above `max` (1 for nothing). */
export function niceMax(max: number): number {
  if (max === Number.POSITIVE_INFINITY) return Number.MAX_VALUE;
  if (!Number.isFinite(max) || max <= 0) return 1;
  const exp = Math.pow(10, Math.floor(Math.log10(max)));
  for (const m of [1, 2, 5, 10]) if (m * exp >= max && Number.isFinite(m * exp)) return m * exp;
  return Number.MAX_VALUE; // beyond the last step that a double holds
}

/** 1234 → "1.2k", 5_300_000 → "5.3M"; with the unit after it. */
export function formatValue(v: number | null, unit = ''): string {
  if (v === null || Number.isNaN(v)) return '—';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '−∞'; // a sum past Number.MAX_VALUE
  if (unit === 's' && Math.abs(v) >= 120) {
    const a = Math.abs(v);
    return a >= 172_800
      ? `${(v / 86_400).toFixed(1)} d`
      : a >= 7200
        ? `${(v / 3600).toFixed(1)} h`
        : `${(v / 60).toFixed(1)} min`;
  }
  const a = Math.abs(v);
  const s =
    a >= 1e12
      ? `${(v / 1e12).toFixed(1)}T`
      : a >= 1e9
        ? `${(v / 1e9).toFixed(1)}G`
        : a >= 1e6
          ? `${(v / 1e6).toFixed(1)}M`
          : a >= 1e4
            ? `${(v / 1e3).toFixed(1)}k`
            : Number.isInteger(v)
              ? String(v)
              : v.toFixed(a < 10 ? 2 : 1);
  return unit ? `${s} ${unit}` : s;
}
