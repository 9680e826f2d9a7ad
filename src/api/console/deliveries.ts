// The delivery search page (C1; in the portal, the merchant's own, C2). The search takes what an operator
// has in hand: payment reference, event id, provider event id, merchant, endpoint, event type, status, time range.
// The search's schema and form are in delivery-search.ts, a delivery's page and retry in delivery-detail.ts.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { seesRawBodies } from '../../access/roles.js';
import { BULK_FORM, bulkControls, pager } from './bulk-form.js';
import { mayDo, requireAccess, type ConsoleEnv } from './context.js';
import { registerDeliveryDetail, RETRY } from './delivery-detail.js';
import { deliveryFilterOf, searchForm, searchSchema } from './delivery-search.js';
import { deliveryTable } from './delivery-table.js';
import { layout, link, money, notice, status, time } from './html.js';
import type { ConsoleServices } from './services.js';

const PAGE = 50;

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

  registerDeliveryDetail(app, s);
}
