// C12, C13: the success-rate sparkline of the console's endpoint rows and the charts' stylesheet. Pure: rates in,
// markup out, with hono/html's escaping and presentation attributes only (the pages' CSP allows no inline style).
import { html } from 'hono/html';
import type { Html } from '../html.js';
import { clean, PALETTE, px } from './chart-values.js';

/** The colour of a success rate: red under 90 %, amber under 99 %, green otherwise, grey for no attempts. */
export const rateColor = (v: number | null) =>
  v === null ? PALETTE.grey : v < 90 ? PALETTE.serverError : v < 99 ? PALETTE.clientError : PALETTE.ok;

/**
 * A 192 × 28 success-rate strip (percentages, 0–100): one column per bucket, its height the rate, coloured by its
 * own rate (a bucket at 0 % is a full red column: nothing succeeded), and the line of the rates over it.
 */
export function sparkline(values: (number | null)[], title: string): Html {
  const w = 192;
  const h = 28;
  const n = Math.max(1, values.length);
  const step = (w - 4) / n;
  const y = (v: number) => px(h - 2 - (Math.min(100, Math.max(0, v)) / 100) * (h - 4));
  const cleaned = values.map(clean);
  const columns = cleaned.map((v, i) => {
    if (v === null) return '';
    const top = v < 1 ? 2 : y(v); // 0 %: the whole height, in red
    return html`<rect
      x="${px(2 + i * step)}"
      y="${top}"
      width="${px(Math.max(2, step - 0.5))}"
      height="${px(h - 2 - top)}"
      fill="${rateColor(v)}"
      fill-opacity="${v < 1 ? 0.9 : 0.35}"
    />`;
  });
  const points = cleaned
    .map((v, i) => (v === null ? null : `${px(2 + i * step + step / 2)},${y(v)}`))
    .filter((p): p is string => p !== null);
  const latest = [...cleaned].reverse().find((v) => v !== null) ?? null;
  const color = rateColor(latest);
  return html`<svg class="sparkline" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" data-latest="${latest ?? ''}">
    <title>${title}: ${latest === null ? 'no attempts' : `${latest.toFixed(1)} % in the latest bucket`}</title>
    <line x1="2" x2="${w - 2}" y1="${h - 2}" y2="${h - 2}" stroke="#e3e6eb" />
    ${columns}${
      points.length > 1 ? html`<polyline points="${points.join(' ')}" fill="none" stroke="${color}" stroke-width="1.5" />` : ''
    }
  </svg>`;
}

/** The CSS the charts need, appended to the console's one stylesheet (the CSP allows no inline style). */
export const CHART_STYLESHEET = `
figure.chart { background: #fff; border: 1px solid #e3e6eb; margin: .8rem 0; padding: .6rem .8rem; }
figure.chart figcaption { font-weight: 600; font-size: .9rem; margin-bottom: .3rem; }
figure.chart svg.chart { max-width: 720px; display: block; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: .9rem; padding: 0; margin: .3rem 0; font-size: .8rem; }
ul.legend li { display: flex; gap: .3rem; align-items: center; }
figure.chart details summary { font-size: .8rem; color: #6b7385; cursor: pointer; }
figure.chart details table { margin-top: .4rem; }
nav.ranges { display: flex; gap: .6rem; font-size: .85rem; margin: .4rem 0; }
nav.ranges a[aria-current=page] { font-weight: 700; color: #1d2330; text-decoration: none; }
.charts-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 1rem; }
svg.sparkline { vertical-align: middle; }
`;
