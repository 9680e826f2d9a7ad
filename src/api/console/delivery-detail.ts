// A delivery's page in the console and the portal (C1, C2, O12): its facts, its attempts (with the in-flight one shown
// as such, R3, and the Retry-After asked, O18), the live region that refreshes them, and the manual retry (audited).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { seesRawBodies } from '../../access/roles.js';
import { IN_FLIGHT } from '../../outbound/attempt-store.js';
import { mayDo, PageError, principalOf, requireAccess, type ConsoleEnv } from './context.js';
import { copyable, endpointNamed, eventNamed } from './format.js';
import { csrfField, layout, status, temporalLink, time, notice } from './html.js';
import { liveUrl, versions } from './live.js';
import type { ConsoleServices } from './services.js';
import { traceRow } from './trace-link.js';

export const RETRY = 'POST /webhook-deliveries/:id/retry';

/** GET /deliveries/:id and POST /deliveries/:id/retry. */
export function registerDeliveryDetail(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/deliveries/:id', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /webhook-deliveries/:id');
    const view = c.get('view');
    const id = c.req.param('id');
    const found = /^whd_[0-9a-z]+$/.test(id) ? await s.deliveries.get(principal, id) : undefined;
    if (!found) throw new PageError(404, `webhook delivery ${id} does not exist`);
    const { delivery: d, attempts } = found;
    const names = await s.names(principal, [d]);
    const bodies = seesRawBodies(principal);
    const canRetry = mayDo(c, s.rules, RETRY) && d.status !== 'DELIVERED';
    const done = c.req.query('retried') === '1' ? 'Retry requested: the delivery attempts now.' : undefined;
    return c.html(
      layout(
        view,
        `Delivery ${d.id}`,
        html`${notice(done)}
          <dl id="delivery-facts" data-live-region>
            <dt>Id</dt>
            <dd>${copyable(d.id)}</dd>
            <dt>Status</dt>
            <dd>${status(d.status)} ${d.failureReason ? html`<span class="muted">${d.failureReason}</span>` : ''}</dd>
            <dt>Event</dt>
            <dd>${eventNamed(view, d.eventPublicId, names)}</dd>
            <dt>Endpoint</dt>
            <dd>${endpointNamed(view, d.endpointId, names)}</dd>
            <dt>Merchant</dt>
            <dd>${d.merchantAccount}</dd>
            <dt>Attempts</dt>
            <dd>${d.attemptCount}</dd>
            <dt>Created</dt>
            <dd>${time(d.createdAt)}</dd>
            <dt>Next attempt</dt>
            <dd>${time(d.nextAttemptAt)}</dd>
            <dt>Delivered</dt>
            <dd>${time(d.deliveredAt)}</dd>
            <dt>Failed</dt>
            <dd>${time(d.failedAt)}</dd>
            ${
              view.surface === 'console'
                ? html`<dt>Workflow</dt>
                    <dd>${temporalLink(view, d.id)}</dd>
                    ${traceRow(s.traces.url, () => s.traces.delivery(d.eventPublicId))}`
                : ''
            }
          </dl>
          ${
            canRetry
              ? html`<form method="post" action="${view.base}/deliveries/${d.id}/retry" class="panel">
                  ${csrfField(view)}
                  <label>Reason (optional)<input name="reason" maxlength="500" /></label>
                  <p><button type="submit">${view.surface === 'portal' ? 'Resend now' : 'Retry now'}</button></p>
                </form>`
              : ''
          }
          <div id="attempts" data-live-region>
            <h2>Attempts</h2>
            ${
              attempts.length === 0
                ? html`<p class="muted">No attempt yet.</p>`
                : html`<table>
                    <thead>
                      <tr>
                        <th class="num">#</th>
                        <th>Started</th>
                        <th>Result</th>
                        <th class="num">HTTP</th>
                        <th class="num">Latency</th>
                        <th>Error</th>
                        <th>Retry-After</th>
                        ${bodies ? html`<th>Response excerpt</th>` : ''}
                      </tr>
                    </thead>
                    <tbody>
                      ${attempts.map(
                        (a) =>
                          html`<tr data-attempt="${a.attemptNumber}">
                            <td class="num">${a.attemptNumber}</td>
                            <td>${time(a.startedAt)}</td>
                            <td>${status(a.errorKind === IN_FLIGHT ? 'IN_FLIGHT' : a.succeeded ? 'OK' : 'FAILED')}</td>
                            <td class="num">${a.responseStatus ?? '—'}</td>
                            <td class="num">${a.latencyMs} ms</td>
                            <td>${a.errorKind ?? ''} <span class="muted">${a.errorMessage ?? ''}</span></td>
                            <td class="retry-after">
                              ${a.retryAfterMs === null ? '' : `${Math.round(a.retryAfterMs / 1000)} s asked`}
                            </td>
                            ${bodies ? html`<td><code>${a.responseExcerpt ?? ''}</code></td>` : ''}
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
          </div>`,
        { live: liveUrl(view, `/deliveries/${d.id}`, versions.delivery(found)) },
      ),
    );
  });

  app.post('/deliveries/:id/retry', async (c) => {
    const principal = requireAccess(c, s.rules, RETRY);
    const id = c.req.param('id');
    if (!/^whd_[0-9a-z]+$/.test(id)) throw new PageError(404, `webhook delivery ${id} does not exist`);
    const reason = c.get('form').reason?.trim().slice(0, 500) || undefined;
    const after = await s.deliveries
      .retry(principal, id, { operator: principalOf(c).name, ...(reason ? { reason } : {}) })
      .catch(s.conflict);
    if (!after) throw new PageError(404, `webhook delivery ${id} does not exist`);
    s.logger.info(
      { deliveryId: id, keyId: principal.keyId, surface: c.get('view').surface },
      'manual retry requested from the console (O12)',
    );
    return c.redirect(`${c.get('view').base}/deliveries/${id}?retried=1`, 303);
  });
}
