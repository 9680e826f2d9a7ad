// Endpoints with their health (C1: success rate and p95 latency over 1 h and 24 h, failure streak, last error,
// disabled reason; C12, C17: its charts, an outage and its recovery), the recover-since form (O13) and, for admins
// and the merchant itself, secret rotation (O9, C2); the signature scheme and the ed25519 public key that verifies
// v1a (O16, O17).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { Endpoint } from '../../outbound/endpoints.js';
import { successRate } from '../../outbound/endpoint-stats.js';
import { OPERATOR_DATE_HINT, parseOperatorDate } from '../../shared/operator-date.js';
import { mayDo, PageError, requireAccess, type ConsoleContext, type ConsoleEnv } from './context.js';
import { deliveryTable } from './delivery-table.js';
import { deprecationNotice } from './event-types.js';
import { copyable } from './format.js';
import { csrfField, layout, notice, status, link, type View } from './html.js';
import { health, p95 } from './endpoint-health.js';
import { UPDATE } from './endpoint-edit.js';
import type { ConsoleServices } from './services.js';
import { parseRange } from '../../shared/chart-window.js';
import { rangeNav } from './charts/views.js';
import { endpointCharts } from './charts/outage-views.js';

const RANGES = ['15m', '1h', '6h', '24h', '7d'] as const; // C12, C17

const RECOVER = 'POST /webhook-endpoints/:id/recover';
const ROTATE = 'POST /webhook-endpoints/:id/secret/rotate';
const TEST = 'POST /webhook-endpoints/:id/test';
const PAGE = 50;

async function findEndpoint(c: ConsoleContext, s: ConsoleServices, route: string): Promise<Endpoint> {
  const principal = requireAccess(c, s.rules, route);
  const id = c.req.param('id') ?? '';
  if (!/^we_[0-9a-z]+$/.test(id)) throw new PageError(404, `webhook endpoint ${id} does not exist`);
  return s.endpoints.get(principal, id).catch(s.conflict);
}

async function detailPage(
  c: ConsoleContext,
  s: ConsoleServices,
  e: Endpoint,
  extra: { message?: string; kind?: 'ok' | 'error'; secret?: string } = {},
) {
  const view = c.get('view');
  const principal = requireAccess(c, s.rules, 'GET /webhook-endpoints/:id');
  const h = (await s.endpointStats([e.id])).get(e.id);
  const { streak, lastError } = health(e, h, Date.now());
  const recent = await s.deliveries.list(principal, { endpointId: e.id, order: 'desc', limit: 20 });
  const range = parseRange(c.req.query('range'), RANGES, '1h');
  const outage = await s.charts.outage(e, range);
  return layout(
    view,
    `Endpoint ${e.id}`,
    html`${notice(extra.message, extra.kind)} ${deprecationNotice(e)}
      ${
        extra.secret
          ? html`<div class="panel">
              <p>New signing secret, shown this once (the previous one keeps signing for the grace period):</p>
              <pre id="new-secret">${extra.secret}</pre>
            </div>`
          : ''
      }
      <dl>
        <dt>Id</dt>
        <dd>${copyable(e.id)}</dd>
        <dt>Description</dt>
        <dd>${e.description ?? html`<span class="muted">none</span>`}</dd>
        <dt>URL</dt>
        <dd class="mono">${e.url}</dd>
        <dt>Status</dt>
        <dd>${status(e.status)} <span class="muted">${e.disabledReason ?? ''}</span></dd>
        <dt>Merchant</dt>
        <dd>${e.merchantAccount}</dd>
        <dt>Event types</dt>
        <dd>${e.eventTypes.join(', ')}</dd>
        <dt>Signature scheme</dt>
        <dd>${e.signatureScheme === 'standard' ? 'Standard Webhooks (webhook-signature)' : 'ApiPay-Signature'}</dd>
        <dt>Signing public key</dt>
        <dd>
          ${e.signingPublicKey ? html`<code id="signing-public-key">${e.signingPublicKey}</code>` : html`<span class="muted">none (HMAC only)</span>`}
        </dd>
        <dt>Success, last hour</dt>
        <dd>
          ${h ? successRate(h.lastHour) : '—'} of ${h?.lastHour.attempts ?? 0} · p95 ${p95(h?.lastHour.p95LatencyMs ?? null)}
        </dd>
        <dt>Success, last 24 h</dt>
        <dd>${h ? successRate(h.lastDay) : '—'} of ${h?.lastDay.attempts ?? 0} · p95 ${p95(h?.lastDay.p95LatencyMs ?? null)}</dd>
        <dt>Failure streak</dt>
        <dd>${streak}</dd>
        <dt>Last error</dt>
        <dd>${lastError}</dd>
      </dl>
      <h2>Attempts</h2>
      ${rangeNav(view, `/endpoints/${e.id}`, range, RANGES)} ${endpointCharts(outage)}
      ${mayDo(c, s.rules, UPDATE) ? html`<p><a id="edit-endpoint" href="${view.base}/endpoints/${e.id}/edit">Edit settings</a></p>` : ''}
      ${
        mayDo(c, s.rules, RECOVER)
          ? html`<form method="post" action="${view.base}/endpoints/${e.id}/recover" class="panel">
              ${csrfField(view)}
              <label
                >Re-queue FAILED deliveries created since<input
                  name="since"
                  required
                  placeholder="2026-12-01 or 2026-12-01T09:30:00Z"
              /></label>
              <p><button type="submit">Recover</button></p>
            </form>`
          : ''
      }
      ${
        mayDo(c, s.rules, ROTATE)
          ? html`<form method="post" action="${view.base}/endpoints/${e.id}/rotate" class="panel">
              ${csrfField(view)}
              <p><button type="submit">Rotate signing secret</button></p>
            </form>`
          : ''
      }
      ${
        mayDo(c, s.rules, TEST) && e.status === 'enabled'
          ? html`<form method="post" action="${view.base}/endpoints/${e.id}/test" class="panel">
              ${csrfField(view)}
              <p>
                <button type="submit">Send test event</button>
                <span class="muted">a signed <code>ping</code>, delivered like any event</span>
              </p>
            </form>`
          : ''
      }
      <h2>Recent deliveries</h2>
      ${deliveryTable(view, recent.slice(0, 20), await s.names(principal, recent.slice(0, 20)))}
      <p><a href="${view.base}/deliveries?endpoint_id=${e.id}">All deliveries of this endpoint →</a></p>`,
  );
}

export function registerEndpointPages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/endpoints', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /webhook-endpoints');
    const view: View = c.get('view');
    const merchant = view.surface === 'console' ? c.req.query('merchant_account')?.trim().slice(0, 200) || undefined : undefined;
    const after = /^we_[0-9a-z]+$/.test(c.req.query('after') ?? '') ? c.req.query('after') : undefined;
    const found = await s.endpoints.list(principal, {
      limit: PAGE,
      order: 'desc',
      ...(merchant ? { merchantAccount: merchant } : {}),
      ...(after ? { afterId: after } : {}),
    });
    const rows = found.slice(0, PAGE);
    const next =
      found.length > PAGE
        ? `${view.base}/endpoints?${new URLSearchParams({ ...(merchant ? { merchant_account: merchant } : {}), after: rows.at(-1)!.id })}`
        : undefined;
    const stats = await s.endpointStats(rows.map((e) => e.id));
    const now = Date.now();
    return c.html(
      layout(
        view,
        'Endpoints',
        html`${
          view.surface === 'console'
            ? html`<form method="get" action="${view.base}/endpoints" class="search">
                <label>Merchant<input name="merchant_account" value="${merchant ?? ''}" placeholder="acct_…" /></label
                ><button type="submit">Filter</button>
              </form>`
            : ''
        }
        ${mayDo(c, s.rules, 'POST /webhook-endpoints') ? html`<p><a id="new-endpoint" href="${view.base}/endpoints/new">New endpoint</a></p>` : ''}
        ${
          rows.length === 0
            ? html`<p class="muted">No endpoints.</p>`
            : html`<table>
                <thead>
                  <tr>
                    <th>Endpoint</th>
                    <th>URL</th>
                    ${view.surface === 'console' ? html`<th>Merchant</th>` : ''}
                    <th>Status</th>
                    <th class="num">Success 1 h</th>
                    <th class="num">p95 1 h</th>
                    <th class="num">Success 24 h</th>
                    <th class="num">p95 24 h</th>
                    <th>Failure streak</th>
                    <th>Last error</th>
                  </tr>
                </thead>
                <tbody>
                  ${rows.map((e) => {
                    const h = stats.get(e.id);
                    const { streak, lastError } = health(e, h, now);
                    return html`<tr data-endpoint="${e.id}">
                      <td>${link(view, '/endpoints', e.id, e.description ?? e.id)}<br />${copyable(e.id)}</td>
                      <td class="mono">${e.url}</td>
                      ${view.surface === 'console' ? html`<td>${e.merchantAccount}</td>` : ''}
                      <td>${status(e.status)} <span class="muted">${e.disabledReason ?? ''}</span></td>
                      <td class="num">${h ? successRate(h.lastHour) : '—'}</td>
                      <td class="num">${p95(h?.lastHour.p95LatencyMs ?? null)}</td>
                      <td class="num">${h ? successRate(h.lastDay) : '—'}</td>
                      <td class="num">${p95(h?.lastDay.p95LatencyMs ?? null)}</td>
                      <td>${streak}</td>
                      <td>${lastError}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>`
        }
        ${next ? html`<p><a href="${next}">Next page →</a></p>` : ''}`,
      ),
    );
  });

  app.get('/endpoints/:id', async (c) => c.html(await detailPage(c, s, await findEndpoint(c, s, 'GET /webhook-endpoints/:id'))));

  app.post('/endpoints/:id/recover', async (c) => {
    const endpoint = await findEndpoint(c, s, RECOVER);
    const since = parseOperatorDate((c.get('form').since ?? '').trim());
    if (!since) return c.html(await detailPage(c, s, endpoint, { message: `since: ${OPERATOR_DATE_HINT}`, kind: 'error' }), 400);
    const principal = c.get('view').principal!;
    const result = await s.deliveries.recover(principal, endpoint.id, since, { operator: principal.name }).catch(s.conflict);
    if (!result) throw new PageError(404, `webhook endpoint ${endpoint.id} does not exist`);
    s.logger.info(
      { endpointId: endpoint.id, since: since.toISOString(), requeued: result.requeued, keyId: principal.keyId },
      'failed deliveries re-queued from the console (O13)',
    );
    return c.html(
      await detailPage(c, s, endpoint, {
        message: `Re-queued ${result.requeued} FAILED deliveries created since ${since.toISOString()}.`,
      }),
    );
  });

  app.post('/endpoints/:id/test', async (c) => {
    const endpoint = await findEndpoint(c, s, TEST);
    const { deliveryId } = await s.sendTest(c.get('view').principal!, endpoint.id).catch(s.conflict);
    return c.html(await detailPage(c, s, endpoint, { message: `Test event sent: delivery ${deliveryId}.` }));
  });

  app.post('/endpoints/:id/rotate', async (c) => {
    const endpoint = await findEndpoint(c, s, ROTATE);
    const rotated = await s.endpoints.rotateSecret(c.get('view').principal!, endpoint.id, s.rotationGraceMs).catch(s.conflict);
    s.logger.info(
      { endpointId: endpoint.id, keyId: c.get('view').principal!.keyId },
      'webhook endpoint secret rotated from the console',
    );
    return c.html(await detailPage(c, s, rotated.endpoint, { message: 'Secret rotated.', secret: rotated.secret }));
  });
}
