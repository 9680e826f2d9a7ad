// The manual-review queue, oldest first, one item and its resolve form (C1, I11; the page is review-detail.ts): the same request the admin API validates
// (resolutionRequestSchema) sent through the same service (the workflow's `resolve` update), the operator being the
// signed-in principal.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { parseTimeCursor, timeCursor } from '../../db/list-window.js';
import { actorOf } from '../../audit/record.js';
import { resolutionRequestSchema, idParam } from '../admin/reconciliation-schemas.js';
import { toOperatorResolution } from '../admin/reconciliations.js';
import { mayDo, PageError, requireAccess, type ConsoleEnv } from './context.js';
import { copyable } from './format.js';
import { age, layout, link, money } from './html.js';
import { liveUrl, versions } from './live.js';
import { amountsDiffer, detailPage } from './review-detail.js';
import { traceRow } from './trace-link.js';
import type { ConsoleServices } from './services.js';
import { parseRange } from '../../shared/chart-window.js';
import { rangeNav, reviewQueueCharts } from './charts/views.js';

const RESOLVE = 'POST /reconciliations/:id/resolution';
const PAGE = 50;
export function registerReviewPages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  // R18: the reconciliation's trace, from its receipt.
  const traceOf = (found: { reconciliation: { provider: string; providerEventId: string } }) =>
    traceRow(s.traces.url, () => s.traces.reconciliation(found.reconciliation.provider, found.reconciliation.providerEventId));
  app.get('/reviews', async (c) => {
    requireAccess(c, s.rules, 'GET /reconciliations');
    const view = c.get('view');
    const provider = /^[a-z0-9-]{1,100}$/.test(c.req.query('provider') ?? '') ? c.req.query('provider') : undefined;
    const after = parseTimeCursor(c.req.query('after') ?? '');
    const rows = await s.reconciliations.list({
      state: 'manual_review',
      order: 'asc',
      limit: PAGE,
      ...(provider ? { provider } : {}),
      ...(after ? { after } : {}),
    });
    const shown = rows.slice(0, PAGE);
    const next =
      rows.length > PAGE
        ? `${view.base}/reviews?${new URLSearchParams({ ...(provider ? { provider } : {}), after: timeCursor(shown.at(-1)!.createdAt, shown.at(-1)!.id) })}`
        : undefined;
    const now = Date.now();
    const range = parseRange(c.req.query('range'), ['1h', '24h', '7d'] as const, '24h'); // C12
    const history = await s.charts.backlog(range);
    return c.html(
      layout(
        view,
        'Manual review',
        html`${rangeNav(view, '/reviews', range, ['1h', '24h', '7d'])} ${reviewQueueCharts(history.window, history.samples)}
          <form method="get" action="${view.base}/reviews" class="search">
            <label>Provider<input name="provider" value="${provider ?? ''}" /></label><button type="submit">Filter</button>
          </form>
          <div id="review-list" data-live-region>
            ${
              shown.length === 0
                ? html`<p class="muted">Nothing waits for review.</p>`
                : html`<table>
                    <thead>
                      <tr>
                        <th>Reconciliation</th>
                        <th>Provider</th>
                        <th>Payment reference</th>
                        <th class="num">Webhook amount</th>
                        <th class="num">Provider amount</th>
                        <th>Waiting</th>
                        <th>Reason</th>
                      </tr>
                    </thead>
                    <tbody>
                      ${shown.map(
                        (r) =>
                          html`<tr data-reconciliation="${r.id}">
                            <td>${link(view, '/reviews', r.id, 'Open')} ${copyable(r.id)}</td>
                            <td>${r.provider}</td>
                            <td>${r.paymentReference}</td>
                            <td class="num">${money(r.amountMinor, r.currency)}</td>
                            <td class="num">${money(r.providerAmountMinor, r.providerCurrency)}</td>
                            <td>${age(now - r.updatedAt.getTime())}</td>
                            <td>${r.reason ?? ''}</td>
                          </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
            ${next ? html`<p><a href="${next}">Next page →</a></p>` : ''}
          </div>`,
        // C15: the first page follows the queue as it changes.
        after ? {} : { live: liveUrl(view, '/reviews', versions.reviews(rows), provider ? { provider } : {}) },
      ),
    );
  });

  const find = async (raw: string) => {
    const parsed = idParam.safeParse({ id: raw });
    const found = parsed.success ? await s.reconciliations.get(parsed.data.id) : undefined;
    if (!found) throw new PageError(404, `reconciliation ${raw} does not exist`);
    return found;
  };

  app.get('/reviews/:id', async (c) => {
    requireAccess(c, s.rules, 'GET /reconciliations/:id');
    const found = await find(c.req.param('id'));
    const done =
      c.req.query('resolved') === '1'
        ? { text: 'Resolved.', kind: 'ok' as const }
        : c.req.query('step_up') === '1' // A30: back from the IdP with a fresh second factor
          ? { text: 'Signed in again with your second factor: approve now.', kind: 'ok' as const }
          : undefined;
    const refusals =
      found.reconciliation.state === 'manual_review' ? await s.reconciliations.refusals(found.reconciliation.id) : undefined;
    return c.html(
      detailPage(c.get('view'), found, {
        canResolve: mayDo(c, s.rules, RESOLVE),
        refusals,
        trace: traceOf(found),
        ...(done ? { message: done } : {}),
      }),
    );
  });

  app.post('/reviews/:id/resolve', async (c) => {
    const principal = requireAccess(c, s.rules, RESOLVE);
    const view = c.get('view');
    const found = await find(c.req.param('id'));
    const form = c.get('form');
    const post =
      form.decision !== 'applied' || !amountsDiffer(found.reconciliation) || !form.post
        ? undefined
        : form.post === 'explicit'
          ? {
              amount_minor: (form.amount_minor ?? '').trim(),
              currency: (form.currency ?? '').trim().toUpperCase(),
              ...(form.currency_reason?.trim() ? { currency_reason: form.currency_reason.trim() } : {}), // A11
            }
          : form.post;
    const parsed = resolutionRequestSchema.safeParse({
      decision: form.decision,
      reason: form.reason ?? '',
      ...(post !== undefined ? { post } : {}),
    });
    if (!parsed.success) {
      const problem = parsed.error.issues.map((i) => `${i.path.join('.') || 'form'}: ${i.message}`).join('; ');
      return c.html(
        detailPage(view, found, { canResolve: true, message: { text: problem, kind: 'error' }, form, trace: traceOf(found) }),
        400,
      );
    }
    // A2, A3: the operator is the signed-in key, audited like an admin API resolution.
    const resolution = { ...toOperatorResolution(parsed.data, principal.name), actor: actorOf(principal) };
    const after = await s.reconciliations
      .resolve(found.reconciliation.id, resolution, { principal, requestId: principal.requestId ?? c.get('requestId') })
      .catch(s.conflict);
    if (!after) throw new PageError(404, `reconciliation ${found.reconciliation.id} does not exist`);
    s.logger.info(
      {
        reconciliationId: found.reconciliation.id,
        decision: parsed.data.decision,
        keyId: principal.keyId,
        pending: after.pending,
      },
      'operator resolution from the console (I11)',
    );
    return c.redirect(`${view.base}/reviews/${encodeURIComponent(found.reconciliation.id)}?resolved=1`, 303);
  });
}
