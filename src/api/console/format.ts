// C14 names before ids: times read as "3 min ago" with the exact UTC time on hover (<time datetime title>), ids in
// <code> that can be selected, with a copy button the page script shows (hidden, and useless, without it), and the
// names beside the ids: an endpoint's description or URL, an event's type and the payment it is about.
import { html } from 'hono/html';
import type { DeliveryNames } from '../../outbound/delivery-names.js';
/** What a link needs of the page's view (html.ts's View; named structurally, html.ts imports this file). */
type View = { base: string };

const UNITS: [number, string][] = [
  [86_400, 'd'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** 3 min ago, in 2 h, just now; past 30 days the date itself. */
export function relative(at: Date, now: Date): string {
  const seconds = Math.round((now.getTime() - at.getTime()) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 5) return 'just now';
  if (abs >= 30 * 86_400) return at.toISOString().slice(0, 10);
  const [size, unit] = UNITS.find(([size]) => abs >= size)!;
  const count = `${Math.floor(abs / size)} ${unit}`;
  return seconds > 0 ? `${count} ago` : `in ${count}`;
}

/** The exact time an operator reads on hover and copies into a ticket: `2026-12-02 12:18:07 UTC`. */
export const exact = (at: Date) => `${at.toISOString().replace('T', ' ').slice(0, 19)} UTC`;

export const when = (at: Date | null | undefined, now: Date = new Date()) =>
  at ? html`<time datetime="${at.toISOString()}" title="${exact(at)}">${relative(at, now)}</time>` : '—';

/** An id as selectable text and, with the page script, a one-click copy (console.js un-hides the button). */
export const copyButton = (id: string) =>
  html`<button type="button" class="copy" data-copy="${id}" aria-label="Copy ${id}" title="Copy ${id}" hidden>Copy</button>`;

export const copyable = (id: string) => html`<code class="id">${id}</code>${copyButton(id)}`;

/** A link named by what it is, with its id under it, copyable. */
export const named = (view: View, path: string, id: string, name: string | undefined, detail?: string) =>
  html`<span class="named"
    ><a href="${view.base}${path}/${encodeURIComponent(id)}">${name ?? id}</a
    >${detail ? html` <span class="detail">${detail}</span>` : ''} ${name ? html`<br />` : ''}${copyable(id)}</span
  >`;

export const endpointNamed = (view: View, id: string, names: DeliveryNames) => {
  const e = names.endpoints.get(id);
  return named(view, '/endpoints', id, e ? (e.description ?? e.url) : undefined, e?.description ? e.url : undefined);
};

export const eventNamed = (view: View, id: string, names: DeliveryNames) => {
  const e = names.events.get(id);
  return named(view, '/events', id, e?.type, e?.paymentReference ?? undefined);
};
