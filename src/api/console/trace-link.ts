// R18: the console's link from a reconciliation or a delivery to its trace (`<APIPAY_TRACE_URL>/<trace id>`, the
// Jaeger UI's trace page under npm start). No row when no trace URL is set; a dash when the row kept no trace.
import { html } from 'hono/html';
import type { Html } from './html.js';

export interface TraceLinks {
  /** APIPAY_TRACE_URL without a trailing slash; undefined: no trace backend to link to. */
  url?: string;
  reconciliation(provider: string, providerEventId: string): Promise<string | null>;
  delivery(eventPublicId: string): Promise<string | null>;
}

/** A `<dt>Trace</dt><dd>…</dd>` pair for a detail page's list, or nothing. */
export function traceRow(url: string | undefined, traceId: () => Promise<string | null>): Html {
  if (!url) return html``;
  return traceId().then(
    (id) =>
      html`<dt>Trace</dt>
        <dd>
          ${id ? html`<a class="trace" href="${url}/${id}">${id.slice(0, 8)}… ↗</a>` : html`<span class="muted">none kept</span>`}
        </dd>`,
  );
}
