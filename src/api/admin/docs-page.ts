// C9: a readable view of /admin/v1/openapi.json at /admin/v1/docs, self-contained (no CDN: the page and its
// script are served from here and render with textContent only, so nothing in the document is parsed as HTML).
import { createHash } from 'node:crypto';
import type { AdminApp } from './app.js';

const script = `
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
const refName = (s) => (s && s.$ref ? s.$ref.split('/').pop() : s && s.type ? s.type : '');
fetch('openapi.json').then((r) => r.json()).then((doc) => {
  const root = document.getElementById('ops');
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version;
  const byTag = new Map();
  for (const [path, item] of Object.entries(doc.paths)) for (const [method, op] of Object.entries(item)) {
    const tag = (op.tags && op.tags[0]) || 'other';
    if (!byTag.has(tag)) byTag.set(tag, []);
    byTag.get(tag).push({ path, method, op });
  }
  for (const [tag, ops] of byTag) {
    root.append(el('h2', tag));
    for (const { path, method, op } of ops) {
      const box = el('details', undefined, 'op');
      const head = el('summary');
      head.append(el('span', method.toUpperCase(), 'm ' + method), el('code', ' /admin/v1' + path + ' '), el('span', op.summary || ''));
      box.append(head);
      const params = op.parameters || [];
      if (params.length) {
        const table = el('table');
        table.append(el('tr'));
        for (const h of ['parameter', 'in', 'required', 'type', 'description']) table.lastChild.append(el('th', h));
        for (const p of params) {
          const row = el('tr');
          const s = p.schema || {};
          row.append(el('td', p.name), el('td', p.in), el('td', p.required ? 'yes' : ''), el('td', s.enum ? s.enum.join(' | ') : refName(s)), el('td', p.description || s.description || ''));
          table.append(row);
        }
        box.append(table);
      }
      const body = op.requestBody && op.requestBody.content && op.requestBody.content['application/json'];
      if (body) box.append(el('p', 'body: ' + refName(body.schema)));
      box.append(el('p', 'responses: ' + Object.keys(op.responses || {}).join(', ')));
      root.append(box);
    }
  }
}).catch((error) => { document.getElementById('ops').textContent = 'cannot load openapi.json: ' + error; });
`;

const style = `body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}code{font-size:13px}.op{border:1px solid #ccc;border-radius:4px;margin:.3em 0;padding:.3em .6em}
.m{display:inline-block;min-width:4.5em;font-weight:bold}.get{color:#0a6}.post{color:#06c}.patch{color:#a60}.delete{color:#c00}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}`;

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const csp = `default-src 'none'; connect-src 'self'; script-src ${hash(script)}; style-src ${hash(style)}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ApiPay admin API</title><style>${style}</style></head>
<body><h1 id="title">ApiPay admin API</h1>
<p>Every operation of the admin API, read from <a href="openapi.json">openapi.json</a>. Requests need <code>Authorization: Bearer …</code>.</p>
<div id="ops">loading…</div><script>${script}</script></body></html>`;

/** Public, like openapi.json (PUBLIC_ROUTES in ./access.ts): the page holds no data, only the viewer. */
export function registerDocsPage(admin: AdminApp): void {
  admin.get('/docs', (c) => {
    c.header('Content-Security-Policy', csp);
    c.header('X-Content-Type-Options', 'nosniff');
    return c.html(page);
  });
}
