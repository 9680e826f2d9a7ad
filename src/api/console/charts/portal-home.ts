// C13: the portal opens on the merchant's own health: each endpoint with its success-rate sparkline over the last
// 24 h, the last 24 h's failed attempts grouped by endpoint and answer, and the deliveries waiting for their next
// attempt with when it is due. Everything is read for the signed-in merchant account only: the endpoints come from
// the endpoint service (which scopes them to the principal), the waiting deliveries by the principal's account.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { successRate } from '../../../outbound/endpoint-stats.js';
import type { Endpoint } from '../../../outbound/endpoints.js';
import { PageError, requireAccess, type ConsoleEnv } from '../context.js';
import { age, layout, link, status, time } from '../html.js';
import type { ConsoleServices } from '../services.js';
import { sparkline } from './svg.js';

const ENDPOINTS = 50;
const name = (e: Endpoint | undefined, id: string) => (e ? (e.description ? `${e.description}` : e.url) : id);

export function registerPortalHome(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /webhook-endpoints');
    requireAccess(c, s.rules, 'GET /webhook-deliveries');
    if (!principal.merchantAccount) throw new PageError(403, 'the portal is for a merchant account');
    const view = c.get('view');
    const endpoints = (await s.endpoints.list(principal, { limit: ENDPOINTS, order: 'desc' })).slice(0, ENDPOINTS);
    const ids = endpoints.map((e) => e.id);
    const byId = new Map(endpoints.map((e) => [e.id, e]));
    const [spark, stats, failures, waiting] = await Promise.all([
      s.charts.sparklines(ids, '24h'),
      s.endpointStats(ids),
      s.charts.failures(ids, principal.merchantAccount),
      s.charts.waiting(principal.merchantAccount),
    ]);
    const now = Date.now();
    const endpointTable =
      endpoints.length === 0
        ? html`<p class="muted">No endpoints yet.</p>`
        : html`<table data-home="endpoints">
            <thead>
              <tr>
                <th>Endpoint</th>
                <th>Status</th>
                <th>Success, last 24 h</th>
                <th class="num">Rate 24 h</th>
                <th class="num">Rate 1 h</th>
                <th>Failing since</th>
              </tr>
            </thead>
            <tbody>
              ${endpoints.map((e) => {
                const h = stats.get(e.id);
                return html`<tr data-endpoint="${e.id}">
                  <td>
                    ${link(view, '/endpoints', e.id, name(e, e.id))}
                    ${e.description ? html`<br /><span class="mono muted">${e.url}</span>` : ''}
                  </td>
                  <td>${status(e.status)}</td>
                  <td>${sparkline(spark.series.get(e.id) ?? [], `success rate of ${e.url}, last 24 h`)}</td>
                  <td class="num">${h ? successRate(h.lastDay) : '—'}</td>
                  <td class="num">${h ? successRate(h.lastHour) : '—'}</td>
                  <td>
                    ${e.failingSince ? html`${age(now - e.failingSince.getTime())} ago` : html`<span class="muted">—</span>`}
                  </td>
                </tr>`;
              })}
            </tbody>
          </table>`;
    const failureTable =
      failures.length === 0
        ? html`<p class="muted">No failed attempts in the last 24 h.</p>`
        : html`<table data-home="failures">
            <thead>
              <tr>
                <th>Endpoint</th>
                <th>Answer</th>
                <th class="num">Failed attempts</th>
                <th>Last</th>
              </tr>
            </thead>
            <tbody>
              ${failures.map(
                (f) =>
                  html`<tr data-failure="${f.endpointId} ${f.status ?? f.kind ?? ''}">
                    <td>${link(view, '/endpoints', f.endpointId, name(byId.get(f.endpointId), f.endpointId))}</td>
                    <td>${f.status !== null ? `HTTP ${f.status}` : (f.kind ?? 'no answer')}</td>
                    <td class="num">${f.count}</td>
                    <td>${time(f.lastAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`;
    const waitingTable =
      waiting.rows.length === 0
        ? html`<p class="muted">Nothing waits to be sent.</p>`
        : html`<table data-home="waiting">
            <thead>
              <tr>
                <th>Delivery</th>
                <th>Endpoint</th>
                <th>Status</th>
                <th class="num">Attempts so far</th>
                <th>Next attempt</th>
              </tr>
            </thead>
            <tbody>
              ${waiting.rows.map(
                (d) =>
                  html`<tr data-waiting="${d.id}">
                    <td>${link(view, '/deliveries', d.id)}</td>
                    <td>${link(view, '/endpoints', d.endpointId, name(byId.get(d.endpointId), d.endpointId))}</td>
                    <td>${status(d.status)}</td>
                    <td class="num">${d.attemptCount}</td>
                    <td>
                      ${
                        d.nextAttemptAt
                          ? html`${time(d.nextAttemptAt)}
                              <span class="muted"
                                >${d.nextAttemptAt.getTime() > now ? `in ${age(d.nextAttemptAt.getTime() - now)}` : 'due now'}</span
                              >`
                          : html`<span class="muted">being sent</span>`
                      }
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`;
    return c.html(
      layout(
        view,
        'Health',
        html`<h2>Endpoints</h2>
          ${endpointTable}
          <h2>Failures, last 24 h</h2>
          ${failureTable}
          <h2>Waiting to retry (${waiting.count}${waiting.count >= 10_000 ? '+' : ''})</h2>
          ${waitingTable}
          ${
            waiting.count > waiting.rows.length
              ? html`<p><a href="${view.base}/deliveries?status=RETRYING">All waiting deliveries →</a></p>`
              : ''
          }`,
      ),
    );
  });
}
