// C16 on the deliveries page: the bulk retry form (the rows' checkboxes belong to it by its id), the CSV export of
// the current search, and the pager that keeps the search's filters (C14).
import { html } from 'hono/html';
import { csrfField, type View } from './html.js';

export const BULK_FORM = 'bulk-retry';

/** The search's own fields, without the page cursor: what the CSV export and the way back from a bulk retry keep. */
export const searchOnly = (raw: Record<string, string>) =>
  new URLSearchParams(Object.entries(raw).filter(([k, v]) => k !== 'after' && k !== 'csrf' && v !== '')).toString();

export function bulkControls(view: View, raw: Record<string, string>, may: { retry: boolean; exports: boolean }) {
  if (!may.retry && !may.exports) return '';
  return html`<div class="bulk">
    ${
      may.retry
        ? html`<form id="${BULK_FORM}" method="post" action="${view.base}/deliveries/retry" class="bulk">
            ${csrfField(view)}
            <input type="hidden" name="back" value="${searchOnly(raw)}" />
            <label>Reason (optional)<input name="reason" maxlength="500" /></label>
            <button type="submit">Retry selected FAILED deliveries</button>
          </form>`
        : ''
    }
    ${may.exports ? html`<p><a id="export-csv" href="${view.base}/deliveries.csv?${searchOnly(raw)}">Export this search as CSV</a></p>` : ''}
  </div>`;
}

export function pager(view: View, raw: Record<string, string>, next: string | undefined) {
  const first = raw.after ? `${view.base}/deliveries?${searchOnly(raw)}` : undefined;
  if (!first && !next) return '';
  return html`<p class="pager">
    ${first ? html`<a href="${first}">← First page</a>` : ''} ${next ? html`<a href="${next}" rel="next">Next page →</a>` : ''}
  </p>`;
}
