// M8: the event catalog in the console and the portal: every type with its description, JSON Schema and example,
// and, for the signed-in merchant, which of its endpoints subscribe to a deprecated type (and by when to move).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { CATALOG } from '../../catalog/catalog.js';
import { deprecatedSubscriptions } from '../../catalog/subscriptions.js';
import type { Endpoint } from '../../outbound/endpoints.js';
import { requireAccess, type ConsoleEnv } from './context.js';
import { layout, link, type View } from './html.js';
import type { ConsoleServices } from './services.js';

/** M8: the notice an endpoint's page shows when it subscribes to a deprecated type. */
export function deprecationNotice(e: Pick<Endpoint, 'eventTypes'>) {
  const found = deprecatedSubscriptions(CATALOG, e.eventTypes);
  if (found.length === 0) return '';
  return html`<div class="notice error deprecated-types">
    ${found.map(
      (d) =>
        html`<p>
          Subscribes to <code>${d.type}</code> (as <code>${d.pattern}</code>), deprecated on
          ${d.on}${d.replacedBy ? html`: use <code>${d.replacedBy}</code>` : ''}.
        </p>`,
    )}
  </div>`;
}

export function registerEventTypePages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/event-types', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /event-types');
    const view: View = c.get('view');
    // The merchant's own endpoints that subscribe to a deprecated type (staff see the catalog only).
    const mine = principal.merchantAccount ? await s.endpoints.list(principal, { limit: 100, order: 'desc' }) : [];
    const affected = mine.flatMap((e) => deprecatedSubscriptions(CATALOG, e.eventTypes).map((d) => ({ endpoint: e, ...d })));
    return c.html(
      layout(
        view,
        'Event types',
        html`${
            affected.length
              ? html`<div class="notice error deprecated-types">
                  ${affected.map(
                    (a) =>
                      html`<p>
                        ${link(view, '/endpoints', a.endpoint.id)} subscribes to <code>${a.type}</code>, deprecated on
                        ${a.on}${a.replacedBy ? html`: use <code>${a.replacedBy}</code>` : ''}.
                      </p>`,
                  )}
                </div>`
              : ''
          }
          <p class="muted">
            Every event we send, with the JSON Schema of its <code>data.object</code> (JSON Schema 2020-12) and an example.
          </p>
          ${CATALOG.types.map((type) => {
            const latest = CATALOG.get(type)!;
            return html`<section class="panel event-type" id="${type}">
              <h2>
                <code>${type}</code>
                <span class="muted"
                  >v${latest.version} · ${latest.source === 'apipay' ? 'sent by ApiPay' : 'sent by your payment services'}</span
                >
              </h2>
              ${
                latest.deprecated
                  ? html`<p class="notice error">
                      Deprecated on
                      ${latest.deprecated.on}${latest.deprecated.replacedBy ? html`: use <code>${latest.deprecated.replacedBy}</code>` : ''}.
                    </p>`
                  : ''
              }
              <p>${latest.description}</p>
              <details>
                <summary>Schema</summary>
                <pre>${JSON.stringify(latest.schema, null, 2)}</pre>
              </details>
              <details open>
                <summary>Example data.object</summary>
                <pre>${JSON.stringify(latest.examples[0], null, 2)}</pre>
              </details>
            </section>`;
          })}`,
      ),
    );
  });
}
