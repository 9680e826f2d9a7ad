// Delivery search, detail and retry (C1; in the portal, the merchant's own, C2). The search takes what an operator
// has in hand: payment reference, event id, provider event id, merchant, endpoint, event type, status, time range.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { z } from 'zod';
import { seesRawBodies } from '../../access/roles.js';
import { OPERATOR_DATE_HINT, parseOperatorDate } from '../../shared/operator-date.js';
import { IN_FLIGHT } from '../../outbound/attempt-store.js';
import { DELIVERY_STATUSES } from '../../shared/outbound.js';
import { mayDo, PageError, principalOf, requireAccess, type ConsoleEnv } from './context.js';
import { csrfField, layout, link, money, notice, status, temporalLink, time, type View } from './html.js';
import { BULK_FORM, bulkControls, pager } from './bulk-form.js';
import { traceRow } from './trace-link.js';
import { deliveryTable } from './delivery-table.js';
import { copyable, endpointNamed, eventNamed } from './format.js';
import { liveUrl, versions } from './live.js';
import type { ConsoleServices } from './services.js';

const PAGE = 50;
const optional = <T extends z.ZodTypeAny>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
const date = z
  .string()
  .transform((text, ctx) => parseOperatorDate(text) ?? (ctx.addIssue({ code: 'custom', message: OPERATOR_DATE_HINT }), z.NEVER));

export const searchSchema = z.object({
  payment_reference: optional(z.string().trim().min(1).max(200)),
  event_id: optional(z.string().regex(/^evt_[A-Za-z0-9_]{1,200}$/, 'must be an evt_… id')),
  provider_event_id: optional(z.string().regex(/^[\x21-\x7e]{1,200}$/, 'must be printable ASCII')),
  merchant_account: optional(z.string().trim().min(1).max(200)),
  endpoint_id: optional(z.string().regex(/^we_[0-9a-z]+$/, 'must be a we_… id')),
  event_type: optional(z.string().regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/, 'must be an event type such as payment.succeeded')),
  status: optional(z.enum(DELIVERY_STATUSES)),
  from: optional(date),
  to: optional(date),
  order: optional(z.enum(['asc', 'desc'])),
  after: optional(z.string().regex(/^whd_[0-9a-z]+$/)),
});

const RETRY = 'POST /webhook-deliveries/:id/retry';

/** The search form's fields as the service's filter (the page, its CSV export and its bulk retry read the same). */
export function deliveryFilterOf(q: z.infer<typeof searchSchema>) {
  return {
    order: q.order ?? ('desc' as const),
    ...(q.from ? { from: q.from } : {}),
    ...(q.to ? { to: q.to } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.endpoint_id ? { endpointId: q.endpoint_id } : {}),
    ...(q.event_id ? { eventId: q.event_id } : {}),
    ...(q.merchant_account ? { merchantAccount: q.merchant_account } : {}),
    ...(q.event_type ? { eventType: q.event_type } : {}),
    ...(q.payment_reference ? { paymentReference: q.payment_reference } : {}),
    ...(q.after ? { afterId: q.after } : {}),
  };
}

function searchForm(view: View, q: Record<string, string>) {
  const field = (name: string, label: string, placeholder = '') =>
    html`<label>${label}<input name="${name}" value="${q[name] ?? ''}" placeholder="${placeholder}" /></label>`;
  return html`<form method="get" action="${view.base}/deliveries" class="search">
    ${field('payment_reference', 'Payment reference', 'pi_…')} ${field('event_id', 'Event id', 'evt_…')}
    ${view.surface === 'console' ? html`${field('provider_event_id', 'Provider event id')} ${field('merchant_account', 'Merchant', 'acct_…')}` : ''}
    ${field('endpoint_id', 'Endpoint', 'we_…')} ${field('event_type', 'Event type', 'payment.succeeded')}
    <label
      >Status
      <select name="status">
        <option value="">any</option>
        ${DELIVERY_STATUSES.map((s) => html`<option value="${s}" ${q.status === s ? 'selected' : ''}>${s}</option>`)}
      </select></label
    >
    ${field('from', 'From', '2026-12-01')} ${field('to', 'To', '2026-12-02')}
    <label
      >Order
      <select name="order">
        <option value="desc">newest first</option>
        <option value="asc" ${q.order === 'asc' ? 'selected' : ''}>oldest first</option>
      </select></label
    >
    <button type="submit">Search</button>
  </form>`;
}

export function registerDeliveryPages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/deliveries', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /webhook-deliveries');
    const view = c.get('view');
    const raw = c.req.query();
    const parsed = searchSchema.safeParse(raw);
    if (!parsed.success) {
      const problem = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      return c.html(layout(view, 'Deliveries', html`${searchForm(view, raw)}${notice(problem, 'error')}`), 400);
    }
    const q = parsed.data;
    // A19: a viewer may not read bodies, so the body search is not run for one (the reconciliations still are).
    const bodySearchRefused = q.payment_reference !== undefined && q.payment_reference !== '' && !seesRawBodies(principal);
    const rows = bodySearchRefused ? [] : await s.deliveries.list(principal, { limit: PAGE, ...deliveryFilterOf(q) });
    const more = rows.length > PAGE;
    const shown = rows.slice(0, PAGE);
    const next = more
      ? `${view.base}/deliveries?${new URLSearchParams({ ...raw, after: shown.at(-1)!.id }).toString()}`
      : undefined;
    // The operator's payment reference or provider event id may be an inbound payment: show its reconciliations too.
    const inbound =
      (q.payment_reference || q.provider_event_id) && mayDo(c, s.rules, 'GET /reconciliations')
        ? await s.reconciliations.list({
            limit: 20,
            ...(q.payment_reference ? { paymentReference: q.payment_reference } : {}),
            ...(q.provider_event_id ? { providerEventId: q.provider_event_id } : {}),
          })
        : [];
    return c.html(
      layout(
        view,
        'Deliveries',
        html`${searchForm(view, raw)}
        ${bodySearchRefused ? notice('No deliveries searched: viewers cannot search deliveries by payment reference (it reads event bodies); reconciliations are searched.', 'error') : ''}
        ${
          inbound.length
            ? html`<h2>Reconciliations</h2>
                <table>
                  <thead>
                    <tr>
                      <th>Reconciliation</th>
                      <th>State</th>
                      <th>Payment</th>
                      <th>Amount</th>
                      <th>Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${inbound.map(
                      (r) =>
                        html`<tr>
                          <td>${link(view, '/reviews', r.id)}</td>
                          <td>${status(r.state)}</td>
                          <td>${r.paymentReference}</td>
                          <td>${money(r.amountMinor, r.currency)}</td>
                          <td>${time(r.createdAt)}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
                <h2>Deliveries</h2>`
            : ''
        }
        ${bulkControls(view, raw, { retry: mayDo(c, s.rules, RETRY) && shown.some((d) => d.status === 'FAILED'), exports: shown.length > 0 })}
        ${deliveryTable(view, shown, await s.names(principal, shown), mayDo(c, s.rules, RETRY) ? { select: BULK_FORM } : {})}
        ${pager(view, raw, next)}`,
      ),
    );
  });

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
