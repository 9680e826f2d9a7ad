// C17: an endpoint's outage and recovery as its page shows them: the "Outage" summary (started, ended or ongoing,
// failed attempts, backlog peak, drained by), the attempts and latency charts (C12) with the outage and the recovery
// ramp shaded, the backlog with its oldest waiting age, and the POSTs delivered per bucket against the ramp's
// allowance (P12). Data in, markup out: svg.ts draws; every band is named in the chart's description and table.
import { html } from 'hono/html';
import { bucketIndex, bucketLabel, CHART_RANGES, type ChartWindow } from '../../../shared/chart-window.js';
import { age, type Html } from '../html.js';
import type { OutageData } from './outage-data.js';
import { PALETTE, renderChart, type Band } from './svg.js';
import { attemptCharts } from './views.js';

const utc = (d: Date) => `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
const at = (d: Date | null, what: string) => (d ? html`<span data-at="${d.toISOString()}">${utc(d)}</span>` : what);

/** The outage spans and the ramp as bands over the window's buckets. */
export function outageBands(d: OutageData): Band[] {
  const w = d.window;
  const label = (i: number) => (i >= w.buckets.length ? 'now' : bucketLabel(w, w.buckets[i]!));
  const bands: Band[] = d.spans.map((s) => ({
    kind: 'outage',
    from: s.from,
    to: s.to,
    color: PALETTE.outageBand,
    label: `outage ${label(s.from)}–${s.ongoing ? 'now' : label(s.to)}: every attempt failed (${s.failed})`,
  }));
  if (d.ramp) {
    const from = d.ramp.start < w.from ? 0 : bucketIndex(w, d.ramp.start);
    const last = d.ramp.end >= w.to ? w.buckets.length - 1 : bucketIndex(w, d.ramp.end);
    if (from >= 0 && last >= from)
      bands.push({
        kind: 'ramp',
        from,
        to: last + 1,
        color: PALETTE.rampBand,
        label: `recovery ramp ${d.ramp.start.toISOString().slice(11, 19)}–${d.ramp.end.toISOString().slice(11, 19)} UTC`,
      });
  }
  return bands;
}

/** The latest outage in the range, in words; nothing when there was none. */
export function outageSummary(d: OutageData): Html | '' {
  const o = d.latest;
  if (!o) return '';
  const more = d.spans.length > 1 ? html`<p class="muted">${d.spans.length} outages in this range; the latest:</p>` : '';
  const lasted = o.started && o.ended ? ` (${age(o.ended.getTime() - o.started.getTime())})` : '';
  return html`<section class="panel" data-outage="${o.ongoing ? 'ongoing' : 'ended'}" aria-labelledby="outage-title">
    <h3 id="outage-title">Outage${o.ongoing ? ' — ongoing' : ''}</h3>
    ${more}
    <dl>
      <dt>Started</dt>
      <dd data-outage-started>
        ${at(o.started, '—')}${o.startsBeforeRange ? html` <span class="muted">(or before this range: widen it)</span>` : ''}
      </dd>
      <dt>Ended</dt>
      <dd data-outage-ended>
        ${o.ongoing ? html`<strong>ongoing</strong>: no attempt has succeeded since` : html`${at(o.ended, '—')}${lasted}`}
      </dd>
      <dt>Failed attempts</dt>
      <dd data-outage-failed>${o.failed}</dd>
      <dt>Backlog peak</dt>
      <dd data-outage-peak>${o.peak} waiting</dd>
      <dt>Drained by</dt>
      <dd data-outage-drained>${o.ongoing ? '—' : at(o.drainedAt, 'not yet')}</dd>
      ${
        d.ramp
          ? html`<dt>Recovery ramp</dt>
              <dd data-outage-ramp>${utc(d.ramp.start)} → ${utc(d.ramp.end)}</dd>`
          : ''
      }
    </dl>
  </section>`;
}

const labels = (w: ChartWindow) => w.buckets.map((b) => bucketLabel(w, b));
const per = (w: ChartWindow) =>
  w.bucketSeconds < 60
    ? `${w.bucketSeconds} s`
    : w.bucketSeconds < 3600
      ? `${w.bucketSeconds / 60} min`
      : `${w.bucketSeconds / 3600} h`;

/** The endpoint page's charts: attempts and latency, backlog and its oldest age, delivered against the ramp. */
export function endpointCharts(d: OutageData): Html {
  const w = d.window;
  const bands = outageBands(d);
  const range = CHART_RANGES[w.range].label;
  return html`${outageSummary(d)} ${attemptCharts(w, d.attempts, bands)}
    <div class="charts-grid">
      ${renderChart({
        id: 'endpoint-backlog',
        title: `Deliveries waiting (not yet DELIVERED or FAILED) at each ${per(w)}'s end, ${range}`,
        kind: 'area',
        labels: labels(w),
        series: [{ name: 'waiting', color: PALETTE.blue, values: d.backlog.waiting }],
        bands,
        empty: `Nothing waited ${range}.`,
      })}
      ${renderChart({
        id: 'endpoint-oldest',
        title: `Oldest waiting delivery's age, ${range}`,
        kind: 'lines',
        unit: 's',
        labels: labels(w),
        series: [{ name: 'oldest waiting', color: PALETTE.orange, values: d.backlog.oldestS }],
        bands,
        empty: `Nothing waited ${range}.`,
      })}
      ${renderChart({
        id: 'endpoint-drain',
        title: `Delivered (2xx) per ${per(w)}${d.ramp ? ' against the recovery ramp’s allowance' : ''}, ${range}`,
        kind: 'bars',
        labels: labels(w),
        series: [{ name: 'delivered', color: PALETTE.ok, values: d.attempts.map((b) => b.ok) }],
        ...(d.ramp ? { overlay: [{ name: 'ramp allowance', color: PALETTE.teal, values: d.allowance }] } : {}),
        bands,
        empty: `Nothing delivered ${range}.`,
      })}
    </div>`;
}
