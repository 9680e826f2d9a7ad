// The table of deliveries every page shares (search results, an endpoint's and an event's deliveries): C1, C2. C14:
// each id beside its name (the endpoint's description or URL, the event's type and payment), copyable, and times
// relative; C16: with `select`, a checkbox on each FAILED row for the bulk retry form of that id.
import { html } from 'hono/html';
import { NO_NAMES, type DeliveryNames } from '../../outbound/delivery-names.js';
import type { Delivery } from '../../outbound/delivery-admin.js';
import { copyButton, endpointNamed, eventNamed } from './format.js';
import { link, status, time, type View } from './html.js';

export function deliveryTable(view: View, rows: Delivery[], names: DeliveryNames = NO_NAMES, options: { select?: string } = {}) {
  if (rows.length === 0) return html`<p class="muted">No deliveries.</p>`;
  const select = options.select;
  return html`<table>
    <thead>
      <tr>
        ${select ? html`<th><span class="muted">Select</span></th>` : ''}
        <th>Delivery</th>
        <th>Status</th>
        <th>Event</th>
        <th>Endpoint</th>
        ${view.surface === 'console' ? html`<th>Merchant</th>` : ''}
        <th class="num">Attempts</th>
        <th>Created</th>
        <th>Next attempt</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (d) =>
          html`<tr data-delivery="${d.id}">
            ${
              select
                ? html`<td>
                    ${
                      d.status === 'FAILED'
                        ? html`<input type="checkbox" name="id" value="${d.id}" form="${select}" aria-label="Select ${d.id}" />`
                        : ''
                    }
                  </td>`
                : ''
            }
            <td>${link(view, '/deliveries', d.id)}${copyButton(d.id)}</td>
            <td>${status(d.status)}</td>
            <td>${eventNamed(view, d.eventPublicId, names)}</td>
            <td>${endpointNamed(view, d.endpointId, names)}</td>
            ${view.surface === 'console' ? html`<td>${d.merchantAccount}</td>` : ''}
            <td class="num">${d.attemptCount}</td>
            <td>${time(d.createdAt)}</td>
            <td>${time(d.nextAttemptAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
