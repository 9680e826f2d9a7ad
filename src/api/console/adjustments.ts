// A5, A27, A30 for L3: the ledger adjustments waiting for a second person (proposed above the dual-control amount
// through the admin API), their page, and its Approve button. The approval follows the admin API's rules exactly
// (POST /ledger/adjustments/proposals/{id}/approve: src/ledger/adjustment-proposals.ts posts it through the one
// money policy): ADMIN_TOKEN approves nothing; with an IdP only its people approve (a key's session is 403), never
// the proposer; a person whose second factor is missing or stale is sent back through the IdP (step-up) and returns
// to this page. The posting and its audit row are the approver's, under their IdP subject.
import type { Hono } from 'hono';
import { html } from 'hono/html';
import type { AdjustmentProposalRow } from '../../ledger/adjustment-proposals.js';
import { SelfApprovalError } from '../../ledger/adjustment-proposals.js';
import { AdjustmentRefusedError } from '../../ledger/adjustments.js';
import { mayDo, PageError, requireAccess, type ConsoleEnv } from './context.js';
import { copyable } from './format.js';
import { csrfField, layout, link, money, notice, status, time, type View } from './html.js';
import { approverGate } from './approver-gate.js';
import type { ConsoleServices } from './services.js';

const LIST = 'GET /ledger/adjustments';
const APPROVE = 'POST /ledger/adjustments/proposals/:id/approve';
const PAGE = 100;
const ID = /^adp_[0-9a-z]{26}$/;

const proposer = (p: AdjustmentProposalRow) => html`${p.operator} <span class="muted">${p.proposedByKey}</span>`;

function detail(view: View, p: AdjustmentProposalRow, approvals: string[], canApprove: boolean) {
  return html`<dl id="proposal">
      <dt>Id</dt>
      <dd>${copyable(p.id)}</dd>
      <dt>State</dt>
      <dd>
        ${status(p.closed ?? 'waiting')}${p.closed ? html` by ${p.closedBy} <span class="muted">${p.closedByKey}</span> · ${time(p.closedAt)}` : ''}
      </dd>
      <dt>Payment</dt>
      <dd>${p.provider} · ${copyable(p.paymentReference)}</dd>
      <dt>Amount</dt>
      <dd>${money(p.amountMinor, p.currency)}</dd>
      <dt>Proposed</dt>
      <dd>${proposer(p)} · ${time(p.proposedAt)}</dd>
      <dt>Reason</dt>
      <dd>${p.reason}</dd>
      ${
        approvals.length
          ? html`<dt>Approved so far</dt>
              <dd>${approvals.join(', ')} (a second person must approve too)</dd>`
          : ''
      }
      ${
        p.adjustmentId
          ? html`<dt>Adjustment</dt>
              <dd>${copyable(p.adjustmentId)}</dd>`
          : ''
      }
    </dl>
    ${
      !p.closed && canApprove
        ? html`<form method="post" action="${view.base}/adjustments/${p.id}/approve" class="panel">
            ${csrfField(view)}
            <button type="submit" id="approve">Approve</button>
          </form>`
        : ''
    }`;
}

const MESSAGES: Record<string, string> = {
  approved: 'Approved: the adjustment is posted.',
  first: 'Your approval is recorded. It was proposed by no person, so a second person must approve it too.',
  step_up: 'Signed in again with your second factor: approve now.',
};

export function registerAdjustmentPages(app: Hono<ConsoleEnv>, s: ConsoleServices): void {
  app.get('/adjustments', async (c) => {
    requireAccess(c, s.rules, LIST);
    const view = c.get('view');
    const payment = (c.req.query('payment') ?? '').trim().slice(0, 200) || undefined;
    const { rows, total } = await s.adjustments.waiting(PAGE, payment);
    const now = s.now();
    return c.html(
      layout(
        view,
        'Adjustments waiting for a second person',
        html`<form method="get" class="filters">
            <label>Payment reference <input name="payment" value="${payment ?? ''}" /></label>
            <button type="submit">Find</button>
          </form>
          <p id="adjustment-count" class="muted">
            ${total} waiting${payment ? ` for ${payment}` : ''}${total > rows.length ? `; the oldest ${rows.length} shown` : ''}
          </p>
          ${
            rows.length === 0
              ? html`<p class="muted">No adjustment waits for approval.</p>`
              : html`<table id="adjustment-list">
                  <thead>
                    <tr>
                      <th>Proposal</th>
                      <th>Payment</th>
                      <th class="num">Amount</th>
                      <th>Proposed by</th>
                      <th>Proposed</th>
                      <th>Reason</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${rows.map(
                      (p) =>
                        html`<tr data-proposal="${p.id}">
                          <td>${link(view, '/adjustments', p.id, 'Open')} ${copyable(p.id)}</td>
                          <td>${p.provider} · ${p.paymentReference}</td>
                          <td class="num">${money(p.amountMinor, p.currency)}</td>
                          <td>${proposer(p)}</td>
                          <td>
                            ${time(p.proposedAt)}
                            <span class="muted">${Math.round((now.getTime() - p.proposedAt.getTime()) / 60_000)} min ago</span>
                          </td>
                          <td>${p.reason}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`
          }`,
      ),
    );
  });

  const find = async (id: string) => {
    const found = ID.test(id) ? await s.adjustments.get(id) : undefined;
    if (!found) throw new PageError(404, `adjustment proposal ${id} does not exist`);
    return found;
  };

  app.get('/adjustments/:id', async (c) => {
    requireAccess(c, s.rules, LIST);
    const p = await find(c.req.param('id'));
    const said = Object.keys(MESSAGES).find((k) => c.req.query(k) === '1');
    const approvals = p.closed ? [] : await s.adjustments.approvals(p.id);
    return c.html(
      layout(
        c.get('view'),
        `Adjustment ${p.paymentReference} · ${money(p.amountMinor, p.currency)}`,
        html`${notice(said ? MESSAGES[said] : undefined)} ${detail(c.get('view'), p, approvals, mayDo(c, s.rules, APPROVE))}`,
      ),
    );
  });

  app.post('/adjustments/:id/approve', async (c) => {
    const principal = requireAccess(c, s.rules, APPROVE);
    const view = c.get('view');
    const id = c.req.param('id');
    const page = `${view.base}/adjustments/${encodeURIComponent(id)}`;
    const stepUp = approverGate(c, s, principal, page);
    if (stepUp) return stepUp;
    if (!ID.test(id)) throw new PageError(404, `adjustment proposal ${id} does not exist`);
    const approved = await s.adjustments.approve(id, principal).catch((error: unknown) => {
      if (error instanceof SelfApprovalError) throw new PageError(403, error.message);
      if (error instanceof AdjustmentRefusedError)
        throw new PageError(error.code === 'not_found' ? 404 : error.code === 'conflict' ? 409 : 400, error.message);
      throw error;
    });
    const first = 'awaiting' in approved;
    s.logger.info({ proposalId: id, keyId: principal.keyId, first }, 'ledger adjustment approved from the console (A5)');
    return c.redirect(`${page}?${first ? 'first' : 'approved'}=1`, 303);
  });
}
