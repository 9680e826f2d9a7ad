// C12: the charts as the pages show them: the range selector (plain links), an endpoint's attempts by outcome and
// its latency, the outbound backlog with its oldest ages, the manual-review queue, the ack → ledger lag and the
// ledger postings by kind and currency. Data in, markup out (svg.ts draws).
import { html } from 'hono/html';
import type { BacklogSample } from '../../../inbound/backlog-history.js';
import type { LagBucket } from '../../../inbound/charts.js';
import type { AttemptBucket } from '../../../outbound/charts.js';
import { bucketLabel, CHART_RANGES, type ChartRange, type ChartWindow } from '../../../shared/chart-window.js';
import type { Html, View } from '../html.js';
import { PALETTE, renderChart, type Band, type Series } from './svg.js';

const labels = (w: ChartWindow) => w.buckets.map((b) => bucketLabel(w, b));
const per = (w: ChartWindow) =>
  w.bucketSeconds >= 86_400
    ? 'day'
    : w.bucketSeconds >= 3600
      ? `${w.bucketSeconds / 3600} h`
      : w.bucketSeconds >= 60
        ? `${w.bucketSeconds / 60} min`
        : `${w.bucketSeconds} s`;

/** Links to the same page with ?range=…; the current one is marked for screen readers and the stylesheet. */
export function rangeNav(view: View, path: string, current: ChartRange, allowed: readonly ChartRange[]): Html {
  return html`<nav class="ranges" aria-label="Chart range">
    ${allowed.map(
      (r) =>
        html`<a href="${view.base}${path}?range=${r}" ${r === current ? html`aria-current="page"` : ''} data-range="${r}"
          >${CHART_RANGES[r].label}</a
        >`,
    )}
  </nav>`;
}

/** C17: `bands` shade the outage and the recovery ramp (outage-views.ts). */
export function attemptCharts(w: ChartWindow, buckets: AttemptBucket[], bands: Band[] = []): Html {
  const pick = (f: (b: AttemptBucket) => number | null) => buckets.map(f);
  const outcomes: Series[] = [
    { name: '2xx', color: PALETTE.ok, values: pick((b) => b.ok) },
    { name: '4xx', color: PALETTE.clientError, values: pick((b) => b.clientError) },
    { name: '5xx', color: PALETTE.serverError, values: pick((b) => b.serverError) },
    { name: 'timeout', color: PALETTE.timeout, values: pick((b) => b.timeout) },
    { name: 'no answer', color: PALETTE.other, values: pick((b) => b.other) },
  ];
  return html`<div class="charts-grid">
    ${renderChart({
      id: 'attempts',
      title: `Attempts per ${per(w)} by outcome, ${CHART_RANGES[w.range].label}`,
      kind: 'bars',
      labels: labels(w),
      series: outcomes,
      bands,
      empty: `No attempts ${CHART_RANGES[w.range].label}.`,
    })}
    ${renderChart({
      id: 'latency',
      title: `Latency p50 and p99 per ${per(w)}, ${CHART_RANGES[w.range].label}`,
      kind: 'lines',
      unit: 'ms',
      labels: labels(w),
      series: [
        { name: 'p50', color: PALETTE.blue, values: pick((b) => b.p50Ms) },
        { name: 'p99', color: PALETTE.orange, values: pick((b) => b.p99Ms) },
      ],
      bands,
      empty: `No attempts ${CHART_RANGES[w.range].label}.`,
    })}
  </div>`;
}

const sampled = (samples: (BacklogSample | null)[], f: (s: BacklogSample) => number) => samples.map((s) => (s ? f(s) : null));
const NO_SAMPLES = 'No samples in this range yet: the API process samples the queues once a minute.';

export function outboundBacklogCharts(w: ChartWindow, samples: (BacklogSample | null)[]): Html {
  return html`<div class="charts-grid">
    ${renderChart({
      id: 'outbound-backlog',
      title: `Outbound backlog, ${CHART_RANGES[w.range].label}`,
      kind: 'area',
      labels: labels(w),
      series: [
        { name: 'PENDING', color: PALETTE.blue, values: sampled(samples, (s) => s.outboundPending) },
        { name: 'RETRYING', color: PALETTE.serverError, values: sampled(samples, (s) => s.outboundRetrying) },
      ],
      empty: NO_SAMPLES,
    })}
    ${renderChart({
      id: 'outbound-oldest',
      title: `Oldest open delivery, ${CHART_RANGES[w.range].label}`,
      kind: 'lines',
      unit: 's',
      labels: labels(w),
      series: [
        { name: 'oldest PENDING', color: PALETTE.blue, values: sampled(samples, (s) => s.outboundPendingOldestS) },
        { name: 'oldest RETRYING', color: PALETTE.serverError, values: sampled(samples, (s) => s.outboundRetryingOldestS) },
      ],
      empty: NO_SAMPLES,
    })}
  </div>`;
}

export function reviewQueueCharts(w: ChartWindow, samples: (BacklogSample | null)[]): Html {
  return html`<div class="charts-grid">
    ${renderChart({
      id: 'review-queue',
      title: `Manual-review queue, ${CHART_RANGES[w.range].label}`,
      kind: 'area',
      labels: labels(w),
      series: [
        { name: 'waiting for review', color: PALETTE.orange, values: sampled(samples, (s) => s.manualReview) },
        { name: 'acknowledged, not started', color: PALETTE.grey, values: sampled(samples, (s) => s.inboundUnstarted) },
      ],
      empty: NO_SAMPLES,
    })}
    ${renderChart({
      id: 'review-oldest',
      title: `Oldest item waiting for review, ${CHART_RANGES[w.range].label}`,
      kind: 'lines',
      unit: 's',
      labels: labels(w),
      series: [{ name: 'oldest in review', color: PALETTE.orange, values: sampled(samples, (s) => s.manualReviewOldestS) }],
      empty: NO_SAMPLES,
    })}
  </div>`;
}

export function lagCharts(w: ChartWindow, buckets: LagBucket[]): Html {
  return html`<div class="charts-grid">
    ${renderChart({
      id: 'ack-ledger-lag',
      title: `Inbound ack → ledger posting, by the time of the ack, ${CHART_RANGES[w.range].label}`,
      kind: 'lines',
      unit: 's',
      labels: labels(w),
      series: [
        { name: 'p50', color: PALETTE.blue, values: buckets.map((b) => b.p50Seconds) },
        { name: 'p99', color: PALETTE.orange, values: buckets.map((b) => b.p99Seconds) },
      ],
      empty: `No webhooks acknowledged ${CHART_RANGES[w.range].label}.`,
    })}
    ${renderChart({
      id: 'ack-ledger-posted',
      title: `Acknowledged webhooks posted or not, per ${per(w)}`,
      kind: 'bars',
      labels: labels(w),
      series: [
        { name: 'posted', color: PALETTE.ok, values: buckets.map((b) => b.posted) },
        { name: 'not posted', color: PALETTE.serverError, values: buckets.map((b) => b.unposted) },
      ],
      empty: `No webhooks acknowledged ${CHART_RANGES[w.range].label}.`,
    })}
  </div>`;
}

const SERIES_COLORS = [PALETTE.ok, PALETTE.blue, PALETTE.orange, PALETTE.teal, PALETTE.pink, PALETTE.clientError, PALETTE.other];
const MAX_SERIES = 7;

export function postingsChart(w: ChartWindow, series: Map<string, number[]>): Html {
  const entries = [...series.entries()];
  // Refunds, chargebacks and reversals take the reds; the rest share the other colours. Past MAX_SERIES: "other".
  const shown = entries.slice(0, MAX_SERIES);
  const rest = entries.slice(MAX_SERIES);
  const list: Series[] = shown.map(([name, values], i) => ({
    name,
    values,
    color: /^(chargeback|reversal)/.test(name)
      ? PALETTE.serverError
      : /^refund/.test(name)
        ? PALETTE.clientError
        : SERIES_COLORS[i % SERIES_COLORS.length]!,
  }));
  if (rest.length)
    list.push({
      name: `${rest.length} more`,
      color: PALETTE.grey,
      values: w.buckets.map((_, i) => rest.reduce((a, [, v]) => a + (v[i] ?? 0), 0)),
    });
  return renderChart({
    id: 'ledger-postings',
    title: `Ledger postings per ${per(w)} by kind and currency, ${CHART_RANGES[w.range].label}`,
    kind: 'bars',
    labels: labels(w),
    series: list,
    empty: `No postings ${CHART_RANGES[w.range].label}.`,
  });
}
