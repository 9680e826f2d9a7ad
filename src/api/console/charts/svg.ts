// C12, C13, C17: the console's and portal's charts as server-rendered SVG: stacked bars, lines (or areas) and
// sparklines, with shaded bands and dashed overlay lines (svg-marks.ts), axes, a legend, a <title> on every mark and,
// under each chart, the same figures as a <table> for screen readers and tests. Pure (no I/O, no clock): series in,
// markup out. Built with hono/html's `html`, which escapes every interpolated string, and only presentation
// attributes (no style attribute, no script), so the pages' strict CSP (style-src 'self', no script) holds.
// Non-finite values are drawn as gaps, never as NaN in a coordinate.
import { html } from 'hono/html';
import type { Html } from '../html.js';
import { clean, colorOf, formatValue, niceMax, px } from './chart-values.js';
import { bandMarks, bandsAt, H, M, overlayLines, PH, PW, W, type Band } from './svg-marks.js';

export { formatValue, niceMax, PALETTE } from './chart-values.js';
export { CHART_STYLESHEET, rateColor, sparkline } from './sparkline.js';
export type { Band } from './svg-marks.js';

export interface Series {
  name: string;
  /** A fill/stroke colour from PALETTE (anything else is replaced by grey: the value lands in an attribute). */
  color: string;
  /** One value per label; null (or NaN, ±Infinity) is a gap. */
  values: (number | null)[];
}

export interface ChartSpec {
  /** Names the chart in the page (data-chart, element ids): [a-z0-9-]. */
  id: string;
  title: string;
  kind: 'bars' | 'lines' | 'area';
  /** The x axis: one label per bucket, oldest first. */
  labels: string[];
  series: Series[];
  /** How a value reads: '' for counts, 'ms', 's', '%'. */
  unit?: string;
  /** Shown when every value is a gap or zero-length data. */
  empty?: string;
  /** C17: spans of buckets shaded behind the series (an outage, a recovery ramp), named in the figures table. */
  bands?: Band[];
  /** C17: dashed lines drawn over a bar chart (a limit beside the counts), on the same axis. */
  overlay?: Series[];
}

const safeId = (id: string) =>
  id
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 60) || 'chart';

function scaleMax(spec: ChartSpec): number {
  let max = 0;
  if (spec.kind === 'bars') {
    for (let i = 0; i < spec.labels.length; i++) {
      let sum = 0;
      for (const s of spec.series) sum += Math.max(0, clean(s.values[i]) ?? 0);
      max = Math.max(max, sum);
    }
  } else for (const s of spec.series) for (const v of s.values) max = Math.max(max, clean(v) ?? 0);
  for (const s of spec.overlay ?? []) for (const v of s.values.slice(0, spec.labels.length)) max = Math.max(max, clean(v) ?? 0);
  return niceMax(max);
}

function axes(spec: ChartSpec, top: number) {
  const n = spec.labels.length;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const every = Math.max(1, Math.ceil(n / 6));
  const step = n > 0 ? PW / n : PW;
  return html`<g class="axes" font-size="10" fill="#6b7385">
    ${ticks.map((t) => {
      const y = px(M.top + PH - t * PH);
      return html`<line x1="${M.left}" x2="${W - M.right}" y1="${y}" y2="${y}" stroke="#e3e6eb" />
        <text x="${M.left - 6}" y="${px(y + 3)}" text-anchor="end">${formatValue(top * t, spec.unit)}</text>`;
    })}
    ${spec.labels.map((label, i) =>
      i % every === 0
        ? html`<text x="${px(M.left + i * step + step / 2)}" y="${H - 10}" text-anchor="middle">${label}</text>`
        : '',
    )}
  </g>`;
}

function bars(spec: ChartSpec, top: number) {
  const n = spec.labels.length;
  const step = PW / Math.max(1, n);
  const width = px(Math.max(1, step * 0.8));
  return spec.labels.map((label, i) => {
    let base = 0;
    return spec.series.map((s) => {
      const v = clean(s.values[i]);
      if (v === null || v <= 0) return '';
      // Heights are clamped to the plot: sums past Number.MAX_VALUE would otherwise leave it.
      const y = M.top + PH - Math.min(1, (base + v) / top) * PH;
      const h = Math.min(M.top + PH - y, (v / top) * PH);
      base += v;
      return html`<rect
        x="${px(M.left + i * step + step * 0.1)}"
        y="${px(y)}"
        width="${width}"
        height="${px(h)}"
        fill="${colorOf(s.color)}"
        ><title>${label} · ${s.name}: ${formatValue(v, spec.unit)}</title></rect
      >`;
    });
  });
}

function lines(spec: ChartSpec, top: number) {
  const n = spec.labels.length;
  const step = PW / Math.max(1, n);
  const x = (i: number) => px(M.left + i * step + step / 2);
  const y = (v: number) => px(M.top + PH - (Math.max(0, v) / top) * PH);
  return spec.series.map((s) => {
    const color = colorOf(s.color);
    // Runs of consecutive values: a gap (null) breaks the line.
    const runs: [number, number][][] = [];
    let run: [number, number][] = [];
    s.values.slice(0, n).forEach((raw, i) => {
      const v = clean(raw);
      if (v === null) {
        if (run.length) runs.push(run);
        run = [];
      } else run.push([x(i), y(v)]);
    });
    if (run.length) runs.push(run);
    const paths = runs.map((r) => {
      const points = r.map(([a, b]) => `${a},${b}`).join(' ');
      if (spec.kind === 'area' && r.length > 1) {
        const floor = px(M.top + PH);
        return html`<polygon
            points="${r[0]![0]},${floor} ${points} ${r.at(-1)![0]},${floor}"
            fill="${color}"
            fill-opacity="0.18"
          />
          <polyline points="${points}" fill="none" stroke="${color}" stroke-width="2" />`;
      }
      return html`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2" />`;
    });
    const dots = s.values.slice(0, n).map((raw, i) => {
      const v = clean(raw);
      return v === null
        ? ''
        : html`<circle cx="${x(i)}" cy="${y(v)}" r="${n > 120 ? 1.5 : 2.5}" fill="${color}"
            ><title>${spec.labels[i]} · ${s.name}: ${formatValue(v, spec.unit)}</title></circle
          >`;
    });
    return html`<g data-series="${s.name}">${paths}${dots}</g>`;
  });
}

const swatch = (color: string) =>
  html`<svg width="12" height="12" aria-hidden="true" focusable="false">
    <rect width="12" height="12" rx="2" fill="${colorOf(color)}" />
  </svg>`;

/** The chart, its legend and the table of its figures. */
export function renderChart(spec: ChartSpec): Html {
  const id = safeId(spec.id);
  const labels = spec.labels;
  const all = [...spec.series, ...(spec.overlay ?? [])];
  const hasData = labels.length > 0 && all.some((s) => s.values.slice(0, labels.length).some((v) => clean(v) !== null));
  const top = scaleMax(spec);
  const total = (s: Series) => s.values.slice(0, labels.length).reduce<number>((a, v) => a + (clean(v) ?? 0), 0);
  const summary = [
    ...spec.series.map((s) =>
      spec.kind === 'bars'
        ? `${s.name} ${formatValue(total(s), spec.unit)}`
        : `${s.name} latest ${formatValue(clean([...s.values.slice(0, labels.length)].reverse().find((v) => clean(v) !== null) ?? null), spec.unit)}`,
    ),
    ...(spec.bands ?? []).map((b) => b.label),
  ].join(', ');
  const svg = hasData
    ? html`<svg
        class="chart"
        viewBox="0 0 ${W} ${H}"
        width="100%"
        role="img"
        aria-labelledby="${id}-title ${id}-desc"
        preserveAspectRatio="xMidYMid meet"
      >
        <title id="${id}-title">${spec.title}</title>
        <desc id="${id}-desc">${summary}</desc>
        ${bandMarks(spec.bands, labels.length)} ${axes(spec, top)} ${spec.kind === 'bars' ? bars(spec, top) : lines(spec, top)}
        ${overlayLines(spec.overlay, labels, top, spec.unit)}
      </svg>`
    : html`<p class="muted chart-empty">${spec.empty ?? 'No data in this range.'}</p>`;
  return html`<figure class="chart" data-chart="${id}">
    <figcaption>${spec.title}</figcaption>
    ${svg}
    <ul class="legend">
      ${all.map((s) => html`<li data-legend="${s.name}">${swatch(s.color)} ${s.name}</li>`)}
      ${(spec.bands ?? []).map((b) => html`<li data-legend-band="${b.kind}">${swatch(b.color)} ${b.label}</li>`)}
    </ul>
    <details>
      <summary>Figures</summary>
      <table data-chart-table="${id}">
        <thead>
          <tr>
            <th>Time</th>
            ${all.map((s) => html`<th class="num">${s.name}</th>`)} ${spec.bands?.length ? html`<th>Marked</th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${labels.map(
            (label, i) =>
              html`<tr>
                <td>${label}</td>
                ${all.map((s) => html`<td class="num">${formatValue(clean(s.values[i]), spec.unit)}</td>`)}
                ${spec.bands?.length ? html`<td>${bandsAt(spec.bands, i)}</td>` : ''}
              </tr>`,
          )}
        </tbody>
      </table>
    </details>
  </figure>`;
}
