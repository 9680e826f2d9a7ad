// The backlog view (C1): webhooks acknowledged vs reconciliations started vs posted, the manual-review queue, and the
// outbound PENDING/RETRYING counts with the oldest age of each (the figures of the C7 gauges, read now).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { requireAccess, type ConsoleEnv } from './context.js';
import { age, layout } from './html.js';
import { liveUrl, versions } from './live.js';
import type { ConsoleServices } from './services.js';
import { parseRange } from '../../shared/chart-window.js';
import { outboundBacklogCharts, rangeNav } from './charts/views.js';

export function registerBacklogPage(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/backlog', async (c) => {
    requireAccess(c, s.rules, 'GET /reconciliations');
    const view = c.get('view');
    const backlog = await s.backlog();
    const { inbound: i, outbound: o } = backlog;
    const range = parseRange(c.req.query('range'), ['1h', '24h', '7d'] as const, '1h'); // C12
    const history = await s.charts.backlog(range);
    const row = (label: string, w: { acked: number; started: number; posted: number }) =>
      html`<tr>
        <td>${label}</td>
        <td class="num">${w.acked}</td>
        <td class="num">${w.started}</td>
        <td class="num">${w.posted}</td>
      </tr>`;
    return c.html(
      layout(
        view,
        'Backlog',
        html`<h2>Inbound: provider webhooks</h2>
          <table>
            <thead>
              <tr>
                <th>Window</th>
                <th class="num">Acknowledged</th>
                <th class="num">Workflow started</th>
                <th class="num">Posted to ledger</th>
              </tr>
            </thead>
            <tbody>
              ${row('last hour', i.lastHour)} ${row('last 24 h', i.lastDay)}
            </tbody>
          </table>
          <table>
            <thead>
              <tr>
                <th>Queue</th>
                <th class="num">Count</th>
                <th>Oldest</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <td>acknowledged, workflow not started (the sweep starts them)</td>
                <td class="num">${i.unstarted.count}</td>
                <td>${i.unstarted.count ? age(i.unstarted.oldestSeconds * 1000) : '—'}</td>
              </tr>
              <tr>
                <td><a href="${view.base}/reviews">manual review</a></td>
                <td class="num">${i.manualReview.count}</td>
                <td>${i.manualReview.count ? age(i.manualReview.oldestSeconds * 1000) : '—'}</td>
              </tr>
            </tbody>
          </table>
          <h2>Outbound: merchant deliveries</h2>
          ${rangeNav(view, '/backlog', range, ['1h', '24h', '7d'])} ${outboundBacklogCharts(history.window, history.samples)}
          <table>
            <thead>
              <tr>
                <th>Status</th>
                <th class="num">Count</th>
                <th>Oldest</th>
              </tr>
            </thead>
            <tbody>
              ${(['PENDING', 'RETRYING'] as const).map(
                (st) =>
                  html`<tr data-backlog="${st}">
                    <td><a href="${view.base}/deliveries?status=${st}&amp;order=asc">${st}</a></td>
                    <td class="num">${o.open[st].count}</td>
                    <td>${o.open[st].count ? age(o.open[st].oldestSeconds * 1000) : '—'}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          <table>
            <thead>
              <tr>
                <th>Window</th>
                <th class="num">Delivered</th>
                <th class="num">Failed</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <td>last hour</td>
                <td class="num">${o.finished.lastHour.delivered}</td>
                <td class="num">${o.finished.lastHour.failed}</td>
              </tr>
              <tr>
                <td>last 24 h</td>
                <td class="num">${o.finished.lastDay.delivered}</td>
                <td class="num">${o.finished.lastDay.failed}</td>
              </tr>
            </tbody>
          </table>`,
        { live: liveUrl(view, '/backlog', versions.backlog(backlog)) }, // C15
      ),
    );
  });
}
