// One event with the body every delivery sends and its deliveries (C1, C2). The body is shown as text, escaped like
// every value; a viewer sees no body (A1).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { seesRawBodies } from '../../access/roles.js';
import { PageError, requireAccess, type ConsoleEnv } from './context.js';
import { deliveryTable } from './delivery-table.js';
import { copyable } from './format.js';
import { layout, time } from './html.js';
import type { ConsoleServices } from './services.js';

/** Pretty-printed when it is JSON (it always is once accepted, O2), else the text as it came. */
function bodyText(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function registerEventPages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/events/:id', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /events/:id');
    const view = c.get('view');
    const id = c.req.param('id');
    const found = /^evt_[A-Za-z0-9_]{1,200}$/.test(id) ? await s.deliveries.event(principal, id) : undefined;
    if (!found) throw new PageError(404, `event ${id} does not exist`);
    const e = found.event;
    return c.html(
      layout(
        view,
        `Event ${e.eventPublicId}`,
        html`<dl>
            <dt>Id</dt>
            <dd>${copyable(e.eventPublicId)}</dd>
            <dt>Type</dt>
            <dd>${e.type}</dd>
            <dt>Merchant</dt>
            <dd>${e.merchantAccount}</dd>
            <dt>Live mode</dt>
            <dd>${e.livemode ? 'yes' : 'no'}</dd>
            <dt>Created</dt>
            <dd>${time(new Date(e.createdUnix * 1000))}</dd>
            <dt>Received</dt>
            <dd>${time(e.receivedAt)}</dd>
          </dl>
          <h2>Body</h2>
          ${
            e.body === null
              ? html`<p id="event-expunged" class="muted">
                  Expunged ${e.expungedAt ? time(e.expungedAt) : ''} (${e.expungeReason ?? 'no reason'}): the body and response
                  excerpts are gone; the event, its deliveries and their attempts stay. It cannot be retried.
                </p>`
              : seesRawBodies(principal)
                ? html`<pre id="event-body">${bodyText(e.body)}</pre>`
                : html`<p class="muted">Bodies are not shown to the viewer role.</p>`
          }
          <h2>Deliveries</h2>
          ${deliveryTable(view, found.deliveries, await s.names(principal, found.deliveries))}`,
      ),
    );
  });
}
