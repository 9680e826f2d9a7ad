// The page frame of the console and the portal (C1, C2) and the small formatting helpers every page shares. Pages
// are built with hono/html's `html` template, which escapes every interpolated value; nothing here calls raw() on
// data. No inline script and no external asset: the stylesheet and the one small script (script.ts: copy buttons and
// live regions, C14, C15) are served by the app itself; every page works without the script.
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Principal } from '../../access/roles.js';
import { minorToDecimal } from '../../inbound/csv.js';
import { when } from './format.js';
import type { Surface } from './session.js';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What every page of one request needs: where it lives, who is signed in, the form token, the Temporal UI. */
export interface View {
  surface: Surface;
  base: '/console' | '/portal';
  principal?: Principal;
  csrf: string;
  temporal: { url: string; namespace: string };
}

const NAV: Record<Surface, [string, string][]> = {
  console: [
    ['/reviews', 'Manual review'],
    ['/deliveries', 'Deliveries'],
    ['/endpoints', 'Endpoints'],
    ['/event-types', 'Event types'],
    ['/backlog', 'Backlog'],
    ['/ledger', 'Ledger'],
    ['/adjustments', 'Adjustments'],
  ],
  portal: [
    ['', 'Health'],
    ['/deliveries', 'Deliveries'],
    ['/endpoints', 'Endpoints'],
    ['/event-types', 'Event types'],
  ],
};

export const csrfField = (view: View) => html`<input type="hidden" name="csrf" value="${view.csrf}" />`;

/** `live`: the page's change stream (C15); the script re-reads the page's live regions when it says so. */
export function layout(view: View, title: string, body: Html, options: { live?: string } = {}): Html {
  const product = view.surface === 'console' ? 'ApiPay console' : 'ApiPay portal';
  const who = view.principal
    ? html`<span class="who"
          >${view.principal.name} ·
          ${view.principal.role}${view.principal.merchantAccount ? html` · ${view.principal.merchantAccount}` : ''}${
            view.principal.idp
              ? html` · <span class="idp-email">${view.principal.idp.email ?? ''}</span> ·
                  <span class="idp-groups">${view.principal.idp.groups.join(', ')}</span>`
              : ''
          }</span
        >
        <form method="post" action="${view.base}/sign-out" class="inline">
          ${csrfField(view)}<button type="submit">Sign out</button>
        </form>`
    : '';
  const nav = view.principal ? NAV[view.surface].map(([path, label]) => html`<a href="${view.base}${path}">${label}</a>`) : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · ${product}</title>
        <link rel="stylesheet" href="${view.base}/assets/console.css" />
        <script src="${view.base}/assets/console.js" defer></script>
      </head>
      <body>
        <header>
          <strong>${product}</strong>
          <nav>${nav}</nav>
          ${who}
        </header>
        <main ${options.live ? html`data-live="${options.live}"` : ''}>
          <h1>${title}</h1>
          ${body}
        </main>
      </body>
    </html>`;
}

/** A link to a workflow's page in the Temporal UI (the ids are workflow ids: deliveries and reconciliations). */
export const temporalLink = (view: View, workflowId: string) =>
  html`<a
    class="temporal"
    href="${view.temporal.url}/namespaces/${encodeURIComponent(view.temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}"
    >Temporal UI ↗</a
  >`;

export const link = (view: View, path: string, id: string, text: string = id) =>
  html`<a href="${view.base}${path}/${encodeURIComponent(id)}">${text}</a>`;

/** C14: relative ("3 min ago"), the exact time on hover (format.ts). */
export const time = (at: Date | null | undefined) => when(at);

/** 95 s → "1 min 35 s", 3 h → "3 h 0 min": an operator's reading of an age. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export const money = (minor: bigint | null | undefined, currency: string | null | undefined) =>
  minor === null || minor === undefined || !currency ? '—' : `${currency} ${minorToDecimal(minor, currency)}`;

export const status = (value: string) =>
  html`<span class="status status-${value.toLowerCase().replace(/[^a-z_]/g, '')}">${value}</span>`;

export const notice = (text: string | undefined, kind: 'ok' | 'error' = 'ok') =>
  text ? html`<p class="notice ${kind}" role="status">${text}</p>` : '';

/** Served at <base>/assets/console.css; the CSP allows styles from 'self' only. */
export const STYLESHEET = `
:root { font-family: system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #1d2330; color: #fff; }
header nav { display: flex; gap: 1rem; flex: 1; }
header a { color: #cfe0ff; text-decoration: none; }
header .who { font-size: .85rem; color: #cbd2de; }
main { padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.35rem; margin: .4rem 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.6rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; background: #fff; font-size: .88rem; }
th, td { text-align: left; padding: .35rem .55rem; border-bottom: 1px solid #e3e6eb; vertical-align: top; }
th { background: #eef0f4; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .mono { font-family: ui-monospace, monospace; font-size: .85rem; }
pre { background: #fff; border: 1px solid #e3e6eb; padding: .7rem; overflow: auto; max-height: 28rem; white-space: pre-wrap; word-break: break-all; }
form.inline { display: inline; }
form.panel, .panel { background: #fff; border: 1px solid #e3e6eb; padding: .8rem 1rem; margin: .8rem 0; }
form.search { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; background: #fff; border: 1px solid #e3e6eb; padding: .8rem; margin-bottom: 1rem; }
label { display: flex; flex-direction: column; font-size: .8rem; gap: .2rem; }
fieldset { border: 1px solid #e3e6eb; margin: .5rem 0; }
input, select, textarea, button { font: inherit; padding: .3rem .45rem; }
button { background: #2456c7; color: #fff; border: 0; border-radius: 3px; cursor: pointer; }
header button { background: #3a4357; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; background: #fff; border: 1px solid #e3e6eb; padding: .8rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
.status { padding: .05rem .4rem; border-radius: 3px; font-size: .8rem; font-weight: 600; background: #e3e6eb; }
.status-delivered, .status-applied, .status-enabled, .status-ok { background: #d4f3dd; color: #145c2c; }
.status-failed, .status-rejected, .status-disabled { background: #fbdada; color: #8a1616; }
.status-retrying, .status-manual_review, .status-in_flight { background: #fdf0c8; color: #6b4d00; }
.notice { padding: .55rem .8rem; border-radius: 3px; }
.notice.ok { background: #d4f3dd; } .notice.error { background: #fbdada; }
.muted { color: #6b7385; }
a.temporal { font-size: .8rem; }
.named .detail { color: #6b7385; font-size: .8rem; }
code.id { font-size: .75rem; color: #6b7385; user-select: all; }
button.copy { background: none; color: #2456c7; border: 1px solid #c9d3e6; font-size: .7rem; padding: 0 .3rem; margin-left: .25rem; }
button.copy.copied { color: #145c2c; border-color: #145c2c; }
time[title] { text-decoration: underline dotted #9aa3b5; }
.live-status { font-size: .75rem; color: #6b7385; }
form.bulk { display: flex; gap: .6rem; align-items: end; margin: .5rem 0; }
`;
