// C16 bulk actions from the console and the portal, through the admin API's own service and rules: retry the selected
// FAILED deliveries (the retry route's role, one audit row per delivery as the signed-in person, A3) and export the
// current search as CSV (the list route's role; the formula guard of src/inbound/csv.ts on every free-text cell, R8;
// the export itself audited). Recovering an endpoint since a time is the endpoint page's form (O13).
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { csvLine } from '../../inbound/csv.js';
import { BodySearchForbiddenError, type Delivery } from '../../outbound/delivery-admin.js';
import { PageError, requireAccess, type ConsoleEnv } from './context.js';
import { searchOnly } from './bulk-form.js';
import { deliveryFilterOf, searchSchema } from './delivery-search.js';
import { copyable } from './format.js';
import { layout, link, notice } from './html.js';
import type { ConsoleServices } from './services.js';

const RETRY = 'POST /webhook-deliveries/:id/retry';
/** At most this many deliveries in one bulk retry (a page shows 50). */
export const MAX_BULK = 100;
/** At most this many rows in one export; past it the file says so in its last line. */
export const MAX_EXPORT = 10_000;
/** Rows read (and named) per query while exporting. */
const CHUNK = 200;

export const CSV_COLUMNS = [
  'delivery_id',
  'status',
  'event_id',
  'event_type',
  'payment_reference',
  'endpoint_id',
  'endpoint_url',
  'endpoint_description',
  'merchant_account',
  'attempts',
  'created_at',
  'next_attempt_at',
  'delivered_at',
  'failed_at',
  'failure_reason',
] as const;
const TEXT = new Set(
  (
    ['event_type', 'payment_reference', 'endpoint_url', 'endpoint_description', 'merchant_account', 'failure_reason'] as const
  ).map((n) => CSV_COLUMNS.indexOf(n)),
);
const iso = (at: Date | null) => at?.toISOString() ?? null;

export function registerBulkActions(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.post('/deliveries/retry', async (c) => {
    const principal = requireAccess(c, s.rules, RETRY);
    const view = c.get('view');
    const form = c.get('form');
    const ids = [...new Set(c.get('formLists').id ?? [])];
    const back = `${view.base}/deliveries?${searchOnly(Object.fromEntries(new URLSearchParams(form.back ?? '')))}`;
    if (ids.length === 0) throw new PageError(400, 'select at least one FAILED delivery to retry');
    if (ids.length > MAX_BULK) throw new PageError(400, `at most ${MAX_BULK} deliveries at once (${ids.length} selected)`);
    const bad = ids.find((id) => !/^whd_[0-9a-z]+$/.test(id));
    if (bad !== undefined) throw new PageError(400, `${bad.slice(0, 60)} is not a whd_… id`);
    const reason = form.reason?.trim().slice(0, 500) || undefined;
    const outcomes: { id: string; ok: boolean; text: string }[] = [];
    // One at a time: each is the admin API's retry (its checks, its audit row as this person, its signal).
    for (const id of ids) {
      try {
        const after = await s.deliveries.retry(principal, id, { operator: principal.name, ...(reason ? { reason } : {}) });
        outcomes.push(
          after ? { id, ok: true, text: `retry requested (${after.status})` } : { id, ok: false, text: 'does not exist' },
        );
      } catch (error) {
        try {
          s.conflict(error);
        } catch (refusal) {
          if (!(refusal instanceof PageError)) throw refusal;
          outcomes.push({ id, ok: false, text: refusal.message });
        }
      }
    }
    const retried = outcomes.filter((o) => o.ok).length;
    s.logger.info(
      { requested: ids.length, retried, keyId: principal.keyId, surface: view.surface },
      'bulk retry requested from the console (O12, C16)',
    );
    return c.html(
      layout(
        view,
        'Bulk retry',
        html`${notice(`Retry requested for ${retried} of ${ids.length} deliveries.`, retried === ids.length ? 'ok' : 'error')}
          <table id="bulk-outcomes">
            <thead>
              <tr>
                <th>Delivery</th>
                <th>Outcome</th>
              </tr>
            </thead>
            <tbody>
              ${outcomes.map(
                (o) =>
                  html`<tr data-delivery="${o.id}" class="${o.ok ? 'ok' : 'refused'}">
                    <td>${link(view, '/deliveries', o.id)} ${copyable(o.id)}</td>
                    <td>${o.text}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          <p><a href="${back}">← Back to the search</a></p>`,
      ),
    );
  });

  app.get('/deliveries.csv', async (c) => {
    const principal = requireAccess(c, s.rules, 'GET /webhook-deliveries');
    const parsed = searchSchema.safeParse(c.req.query());
    if (!parsed.success) throw new PageError(400, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    const { after: _after, ...q } = parsed.data;
    const filter = deliveryFilterOf(q);
    let body = csvLine([...CSV_COLUMNS]);
    let count = 0;
    let afterId: string | undefined;
    let truncated = false;
    for (;;) {
      const rows: Delivery[] = await s.deliveries
        .list(principal, { ...filter, limit: CHUNK, ...(afterId ? { afterId } : {}) })
        .catch((error: unknown) => {
          if (error instanceof BodySearchForbiddenError) throw new PageError(403, error.message); // A19
          throw error;
        });
      const chunk = rows.slice(0, Math.min(CHUNK, MAX_EXPORT - count));
      const names = await s.names(principal, chunk);
      for (const d of chunk) {
        const e = names.endpoints.get(d.endpointId);
        const ev = names.events.get(d.eventPublicId);
        body += csvLine(
          [
            d.id,
            d.status,
            d.eventPublicId,
            ev?.type,
            ev?.paymentReference,
            d.endpointId,
            e?.url,
            e?.description,
            d.merchantAccount,
            d.attemptCount,
            iso(d.createdAt),
            iso(d.nextAttemptAt),
            iso(d.deliveredAt),
            iso(d.failedAt),
            d.failureReason,
          ],
          TEXT,
        );
      }
      count += chunk.length;
      if (rows.length <= CHUNK) break;
      if (count >= MAX_EXPORT) {
        truncated = true;
        break;
      }
      afterId = chunk.at(-1)!.id;
    }
    if (truncated) body += csvLine([`# truncated at ${MAX_EXPORT} rows: narrow the search (from, to, status) for the rest`]);
    // A3: who took which selection out, and how much of it.
    await s.audit(principal, {
      action: 'delivery.export',
      target: { type: 'webhook_delivery', id: 'csv' },
      after: { filter: searchOnly(c.req.query()), rows: count, truncated, surface: c.get('view').surface },
    });
    const day = new Date().toISOString().slice(0, 10);
    return c.body(body, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="deliveries-${day}.csv"`,
    });
  });
}
