// The manual-review queue, oldest first, and the resolve form (C1, I11): the same request the admin API validates
// (resolutionRequestSchema) sent through the same service (the workflow's `resolve` update), the operator being the
// signed-in principal.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import { parseTimeCursor, timeCursor } from '../../db/list-window.js';
import type { ReconciliationRow } from '../../inbound/reconciliation-admin.js';
import { OPERATOR_MAX } from '../../shared/operator-input.js';
import { resolutionRequestSchema, idParam } from '../admin/reconciliation-schemas.js';
import { toOperatorResolution } from '../admin/reconciliations.js';
import { mayDo, PageError, requireAccess, type ConsoleEnv } from './context.js';
import { age, csrfField, layout, link, money, notice, status, temporalLink, time, type View } from './html.js';
import type { ConsoleServices } from './services.js';

const RESOLVE = 'POST /reconciliations/:id/resolution';
const PAGE = 50;
const amountsDiffer = (r: ReconciliationRow) =>
  r.providerAmountMinor !== null &&
  (r.providerAmountMinor !== r.amountMinor || (r.providerCurrency !== null && r.providerCurrency !== r.currency));

function resolveForm(view: View, r: ReconciliationRow, form: Record<string, string> = {}) {
  const checked = (name: string, value: string, byDefault = false) =>
    (form[name] ?? (byDefault ? value : '')) === value ? 'checked' : '';
  return html`<form method="post" action="${view.base}/reviews/${encodeURIComponent(r.id)}/resolve" class="panel" id="resolve">
    ${csrfField(view)}
    <fieldset>
      <legend>Decision</legend>
      <label
        ><span
          ><input type="radio" name="decision" value="applied" ${checked('decision', 'applied', true)} /> applied: post to the
          ledger</span
        ></label
      >
      <label
        ><span
          ><input type="radio" name="decision" value="rejected" ${checked('decision', 'rejected')} /> rejected: post nothing</span
        ></label
      >
      <label
        ><span
          ><input type="radio" name="decision" value="acknowledged" ${checked('decision', 'acknowledged')} /> acknowledged: the
          ledger is already right</span
        ></label
      >
    </fieldset>
    ${
      amountsDiffer(r)
        ? html`<fieldset>
            <legend>Amount to post (applied)</legend>
            <label
              ><span
                ><input type="radio" name="post" value="provider" ${checked('post', 'provider', true)} /> provider's:
                ${money(r.providerAmountMinor, r.providerCurrency ?? r.currency)}</span
              ></label
            >
            <label
              ><span
                ><input type="radio" name="post" value="webhook" ${checked('post', 'webhook')} /> webhook's:
                ${money(r.amountMinor, r.currency)}</span
              ></label
            >
            <label
              ><span
                ><input type="radio" name="post" value="explicit" ${checked('post', 'explicit')} /> this amount (minor units):
                <input name="amount_minor" size="12" value="${form.amount_minor ?? ''}" />
                <input name="currency" size="4" value="${form.currency ?? r.currency}" /></span
            ></label>
          </fieldset>`
        : ''
    }
    <label>Reason<textarea name="reason" rows="2" cols="60" required maxlength="1000">${form.reason ?? ''}</textarea></label>
    <p><button type="submit">Resolve</button></p>
  </form>`;
}

function detailPage(
  view: View,
  found: NonNullable<Awaited<ReturnType<ConsoleServices['reconciliations']['get']>>>,
  canResolve: boolean,
  message?: { text: string; kind: 'ok' | 'error' },
  form?: Record<string, string>,
) {
  const r = found.reconciliation;
  const res = found.resolution;
  return layout(
    view,
    `Reconciliation ${r.id}`,
    html`${notice(message?.text, message?.kind)}
      <dl>
        <dt>State</dt>
        <dd>${status(r.state)} <span class="muted">${r.reason ?? ''}</span></dd>
        <dt>Provider</dt>
        <dd>${r.provider} · event ${r.providerEventId} · ${r.eventType}</dd>
        <dt>Payment reference</dt>
        <dd>${r.paymentReference}</dd>
        <dt>Webhook amount</dt>
        <dd>${money(r.amountMinor, r.currency)}</dd>
        <dt>Provider amount</dt>
        <dd>${money(r.providerAmountMinor, r.providerCurrency)}</dd>
        <dt>Ledger transaction</dt>
        <dd>${r.ledgerTransactionId ?? '—'}</dd>
        <dt>Acknowledged</dt>
        <dd>${time(r.acknowledgedAt)}</dd>
        <dt>Workflow</dt>
        <dd>${temporalLink(view, r.id)}</dd>
      </dl>
      ${
        res
          ? html`<h2>Resolution</h2>
              <dl>
                <dt>Decision</dt>
                <dd>${status(res.decision)}</dd>
                <dt>Operator</dt>
                <dd>${res.operator}</dd>
                <dt>Reason</dt>
                <dd>${res.reason}</dd>
                <dt>Posted</dt>
                <dd>${money(res.postedAmountMinor, res.postedCurrency)} ${res.postBasis ? `(${res.postBasis})` : ''}</dd>
                <dt>Resolved</dt>
                <dd>${time(res.resolvedAt)}</dd>
              </dl>`
          : r.state === 'manual_review' && canResolve
            ? html`<h2>Resolve</h2>
                ${resolveForm(view, r, form)}`
            : ''
      }
      <h2>Transitions</h2>
      <table>
        <thead>
          <tr>
            <th>From</th>
            <th>To</th>
            <th>By</th>
            <th>Reason</th>
            <th>At</th>
          </tr>
        </thead>
        <tbody>
          ${found.transitions.map(
            (t) =>
              html`<tr>
                <td>${t.fromState}</td>
                <td>${t.toState}</td>
                <td>${t.actor}</td>
                <td>${t.reason ?? ''}</td>
                <td>${time(t.at)}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
  );
}

export function registerReviewPages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
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
    return c.html(
      layout(
        view,
        'Manual review',
        html`<form method="get" action="${view.base}/reviews" class="search">
            <label>Provider<input name="provider" value="${provider ?? ''}" /></label><button type="submit">Filter</button>
          </form>
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
                          <td>${link(view, '/reviews', r.id, 'Open')}</td>
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
          ${next ? html`<p><a href="${next}">Next page →</a></p>` : ''}`,
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
    const done = c.req.query('resolved') === '1' ? { text: 'Resolved.', kind: 'ok' as const } : undefined;
    return c.html(detailPage(c.get('view'), found, mayDo(c, s.rules, RESOLVE), done));
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
          ? { amount_minor: (form.amount_minor ?? '').trim(), currency: (form.currency ?? '').trim().toUpperCase() }
          : form.post;
    const parsed = resolutionRequestSchema.safeParse({
      decision: form.decision,
      operator: `${principal.name} (${principal.keyId})`.slice(0, OPERATOR_MAX),
      reason: form.reason ?? '',
      ...(post !== undefined ? { post } : {}),
    });
    if (!parsed.success) {
      const problem = parsed.error.issues.map((i) => `${i.path.join('.') || 'form'}: ${i.message}`).join('; ');
      return c.html(detailPage(view, found, true, { text: problem, kind: 'error' }, form), 400);
    }
    const after = await s.reconciliations.resolve(found.reconciliation.id, toOperatorResolution(parsed.data)).catch(s.conflict);
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
