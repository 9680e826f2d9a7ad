// One reconciliation as the console shows it (C1, I11): its amounts, resolution or resolve form (which amount to
// post when the webhook's and the provider's differ), the requests the workflow refused (C6) and its trail.
import { copyable } from './format.js';
import { html } from 'hono/html';
import type { ReconciliationRow } from '../../inbound/reconciliation-admin.js';
import type { ReconciliationProgress } from '../../shared/inbound.js';
import { csrfField, layout, money, notice, status, temporalLink, time, type Html, type View } from './html.js';
import type { ConsoleServices } from './services.js';

type Found = NonNullable<Awaited<ReturnType<ConsoleServices['reconciliations']['get']>>>;
type Refusal = NonNullable<ReconciliationProgress['refusedResolutions']>[number];

export const amountsDiffer = (r: ReconciliationRow) =>
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
            <label
              >In another currency than the payment's, why (a second person then approves):
              <input name="currency_reason" size="40" maxlength="1000" value="${form.currency_reason ?? ''}"
            /></label>
          </fieldset>`
        : ''
    }
    <label>Reason<textarea name="reason" rows="2" cols="60" required maxlength="1000">${form.reason ?? ''}</textarea></label>
    <p><button type="submit">Resolve</button></p>
  </form>`;
}

/** A5, A30: the resolution waiting for a second person, and (for an operator) the button that approves it. */
function proposalPanel(view: View, id: string, p: NonNullable<Found['proposal']>, canApprove: boolean) {
  return html`<h2>Waiting for a second person</h2>
    <dl id="proposal">
      <dt>Proposed</dt>
      <dd>${status(p.decision)} by ${p.proposedBy} <span class="muted">${p.proposedByKey}</span> · ${time(p.proposedAt)}</dd>
      <dt>Reason</dt>
      <dd>${p.reason}</dd>
    </dl>
    ${
      canApprove
        ? html`<form method="post" action="${view.base}/reviews/${encodeURIComponent(id)}/approve" class="panel">
            ${csrfField(view)}
            <button type="submit" id="approve">Approve</button>
          </form>`
        : ''
    }`;
}

export interface DetailOptions {
  canResolve: boolean;
  /** C6: what the workflow refused (undefined: it could not be asked). */
  refusals?: Refusal[] | undefined;
  message?: { text: string; kind: 'ok' | 'error' };
  form?: Record<string, string>;
  /** R18: the Trace row (./trace-link.ts). */
  trace?: Html;
}

export function detailPage(view: View, found: Found, { canResolve, refusals, message, form, trace }: DetailOptions) {
  const r = found.reconciliation;
  const res = found.resolution;
  return layout(
    view,
    `Reconciliation ${r.paymentReference} · ${r.provider}`,
    html`${notice(message?.text, message?.kind)}
      <dl>
        <dt>Id</dt>
        <dd>${copyable(r.id)}</dd>
        <dt>State</dt>
        <dd>${status(r.state)} <span class="muted">${r.reason ?? ''}</span></dd>
        <dt>Provider</dt>
        <dd>${r.provider} · ${r.eventType} · event ${copyable(r.providerEventId)}</dd>
        <dt>Payment reference</dt>
        <dd>${copyable(r.paymentReference)}</dd>
        <dt>Webhook amount</dt>
        <dd>${money(r.amountMinor, r.currency)}</dd>
        <dt>Provider amount</dt>
        <dd>${money(r.providerAmountMinor, r.providerCurrency)}</dd>
        <dt>Ledger transaction</dt>
        <dd>${r.ledgerTransactionId ? copyable(r.ledgerTransactionId) : '—'}</dd>
        <dt>Acknowledged</dt>
        <dd>${time(r.acknowledgedAt)}</dd>
        <dt>Workflow</dt>
        <dd>${temporalLink(view, r.id)}</dd>
        ${trace ?? ''}
      </dl>
      ${found.proposal && !res ? proposalPanel(view, r.id, found.proposal, canResolve) : ''}
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
          : r.state === 'manual_review' && canResolve && !found.proposal
            ? html`<h2>Resolve</h2>
                ${resolveForm(view, r, form)}`
            : ''
      }
      ${
        refusals?.length
          ? html`<h2>Refused requests</h2>
              <table id="refusals">
                <thead>
                  <tr>
                    <th>Via</th>
                    <th>Operator</th>
                    <th>Why</th>
                  </tr>
                </thead>
                <tbody>
                  ${refusals.map(
                    (f) =>
                      html`<tr>
                        <td>${f.via}</td>
                        <td>${f.operator ?? '—'}</td>
                        <td>${f.problem}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
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
