// The table of deliveries every page shares (search results, an endpoint's and an event's deliveries): C1, C2.
import { html } from 'hono/html';
import type { Delivery } from '../../outbound/delivery-admin.js';
import { link, status, time, type View } from './html.js';

export function deliveryTable(view: View, rows: Delivery[]) {
  if (rows.length === 0) return html`<p class="muted">No deliveries.</p>`;
  return html`<table>
    <thead>
      <tr>
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
            <td>${link(view, '/deliveries', d.id)}</td>
            <td>${status(d.status)}</td>
            <td>${link(view, '/events', d.eventPublicId)}</td>
            <td>${link(view, '/endpoints', d.endpointId)}</td>
            ${view.surface === 'console' ? html`<td>${d.merchantAccount}</td>` : ''}
            <td class="num">${d.attemptCount}</td>
            <td>${time(d.createdAt)}</td>
            <td>${time(d.nextAttemptAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
