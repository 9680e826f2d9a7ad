// C1: an endpoint's health cells on the console's and portal's endpoint pages (./endpoints.ts): its failure streak,
// last error and p95 latency as shown in the list and on the detail page; P13: the deliveries parked for it.
import { html } from 'hono/html';
import type { Endpoint } from '../../outbound/endpoints.js';
import type { EndpointStats } from '../../outbound/endpoint-stats.js';
import { age, time } from './html.js';

export const p95 = (ms: number | null) => (ms === null ? '—' : `${ms} ms`);

export function health(e: Endpoint, h: EndpointStats | undefined, now: number) {
  const parked = h?.parked
    ? html` · <span class="parked">${h.parked} ${h.parked === 1 ? 'delivery' : 'deliveries'} parked</span>
        <span class="muted">(circuit open or draining: sent at the recovery ramp's rate once it answers 2xx)</span>`
    : '';
  const streak = e.failingSince
    ? html`failing for ${age(now - e.failingSince.getTime())}${parked}`
    : h?.parked
      ? html`<span class="muted">none</span>${parked}`
      : html`<span class="muted">none</span>`;
  const lastError = h?.lastError
    ? html`${time(h.lastError.at)} ${h.lastError.kind ?? ''} ${h.lastError.status ?? ''}
        <span class="muted">${h.lastError.message ?? ''}</span>`
    : html`<span class="muted">none</span>`;
  return { streak, lastError };
}
