// C12: the console's ledger page: postings per day by kind and currency, and the inbound ack → ledger lag (p50,
// p99, posted or not) of the webhooks acknowledged in the range. Staff only, as the ledger check it stands beside.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { parseRange } from '../../../shared/chart-window.js';
import { requireAccess, type ConsoleEnv } from '../context.js';
import { layout } from '../html.js';
import type { ConsoleServices } from '../services.js';
import { lagCharts, postingsChart, rangeNav } from './views.js';

export function registerLedgerPage(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/ledger', async (c) => {
    requireAccess(c, s.rules, 'GET /ledger/check');
    const view = c.get('view');
    const days = parseRange(c.req.query('days'), ['7d', '30d'] as const, '30d');
    const lagRange = parseRange(c.req.query('range'), ['1h', '24h', '7d'] as const, '24h');
    const [postings, lag] = await Promise.all([s.charts.postings(days), s.charts.lag(lagRange)]);
    const daysNav = html`<nav class="ranges" aria-label="Postings range">
      ${(['7d', '30d'] as const).map(
        (d) =>
          html`<a href="${view.base}/ledger?days=${d}&amp;range=${lagRange}" ${d === days ? html`aria-current="page"` : ''}
            >last ${d === '7d' ? '7' : '30'} days</a
          >`,
      )}
    </nav>`;
    return c.html(
      layout(
        view,
        'Ledger',
        html`<h2>Postings</h2>
          ${daysNav} ${postingsChart(postings.window, postings.series)}
          <h2>Inbound: acknowledged → posted</h2>
          ${rangeNav(view, '/ledger', lagRange, ['1h', '24h', '7d'])} ${lagCharts(lag.window, lag.buckets)}`,
      ),
    );
  });
}
