// C12, C17: the plot's geometry and the marks drawn over or under a chart's series: shaded bands (an outage, a
// recovery ramp: a span of buckets, each with its <title> for hover and screen readers) and overlay lines on a bar
// chart (the ramp's allowance beside the POSTs delivered). Pure markup with presentation attributes only (CSP).
import { html } from 'hono/html';
import { clean, colorOf, formatValue, px } from './chart-values.js';

export const W = 720;
export const H = 220;
export const M = { left: 56, right: 12, top: 12, bottom: 30 };
export const PW = W - M.left - M.right;
export const PH = H - M.top - M.bottom;

export interface Band {
  /** What the band marks: [a-z-], also its data-band attribute ("outage", "ramp"). */
  kind: string;
  /** First bucket index and the index past the last (exclusive). */
  from: number;
  to: number;
  color: string;
  /** Its hover title and its words in the chart's description and figures table ("outage 12:05–12:40"). */
  label: string;
}

/** The bands behind the series: a light fill over the buckets they span, clipped to the plot. */
export function bandMarks(bands: readonly Band[] | undefined, n: number) {
  if (!bands?.length || n <= 0) return '';
  const step = PW / n;
  return bands.map((b) => {
    const from = Math.max(0, Math.min(n, b.from));
    const to = Math.max(from, Math.min(n, b.to));
    if (to <= from) return '';
    return html`<rect
      data-band="${b.kind.replace(/[^a-z-]/g, '')}"
      x="${px(M.left + from * step)}"
      y="${M.top}"
      width="${px((to - from) * step)}"
      height="${PH}"
      fill="${colorOf(b.color)}"
      ><title>${b.label}</title></rect
    >`;
  });
}

/** Overlay lines over bars (dashed, so they read as a limit rather than a count), one point per bucket with a value. */
export function overlayLines(
  series: readonly { name: string; color: string; values: (number | null)[] }[] | undefined,
  labels: readonly string[],
  top: number,
  unit = '',
) {
  if (!series?.length) return '';
  const n = labels.length;
  const step = PW / Math.max(1, n);
  const x = (i: number) => px(M.left + i * step + step / 2);
  const y = (v: number) => px(M.top + PH - Math.min(1, Math.max(0, v) / top) * PH);
  return series.map((s) => {
    const color = colorOf(s.color);
    const pts = s.values.slice(0, n).flatMap((raw, i) => {
      const v = clean(raw);
      return v === null ? [] : [{ i, v }];
    });
    const line = pts.length > 1 ? pts.map((p) => `${x(p.i)},${y(p.v)}`).join(' ') : '';
    return html`<g data-series="${s.name}" data-overlay="true">
      ${line ? html`<polyline points="${line}" fill="none" stroke="${color}" stroke-width="2" stroke-dasharray="5 3" />` : ''}
      ${pts.map(
        (p) =>
          html`<circle cx="${x(p.i)}" cy="${y(p.v)}" r="2.5" fill="${color}"
            ><title>${labels[p.i]} · ${s.name}: ${formatValue(p.v, unit)}</title></circle
          >`,
      )}
    </g>`;
  });
}

/** Which bands a bucket lies in, for the figures table ("outage", "ramp"; empty when none). */
export const bandsAt = (bands: readonly Band[] | undefined, i: number) =>
  (bands ?? [])
    .filter((b) => i >= b.from && i < b.to)
    .map((b) => b.kind)
    .join(', ');
