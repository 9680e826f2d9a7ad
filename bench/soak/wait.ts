// Waiting for the soak's apps to be ready and, after the traffic, for every workflow to settle.
import type { Sql } from 'postgres';
import type { AckedWebhook } from './inbound.js';

export async function waitReady(url: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await fetch(url).then((r) => r.status, () => 0);
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(`${url} not ready within ${timeoutMs / 1000}s`);
}

/** Until every acknowledged webhook is in a terminal or review state and no delivery is PENDING/RETRYING. */
export async function waitSettled(sql: Sql, webhooks: AckedWebhook[], events: string[], timeoutMs: number): Promise<string> {
  const ids = webhooks.map((w) => `reconcile:${w.provider}:${w.eventId}`);
  const started = Date.now();
  let line = '';
  for (;;) {
    const [r] = await sql<{ settled: number }[]>`
      select count(*)::int as settled from reconciliations where id = any(${ids}) and state in ('applied', 'rejected', 'manual_review')`.catch(() => [{ settled: -1 }]);
    const [d] = await sql<{ open: number; stored: number }[]>`
      select count(*) filter (where status in ('PENDING', 'RETRYING'))::int as open, count(distinct event_public_id)::int as stored
        from deliveries where event_public_id = any(${events})`.catch(() => [{ open: -1, stored: -1 }]);
    line = `${r!.settled}/${ids.length} webhooks settled, ${d!.stored}/${events.length} events fanned out, ${d!.open} deliveries open`;
    if (r!.settled === ids.length && d!.open === 0 && d!.stored === events.length) return `${line} after ${((Date.now() - started) / 1000).toFixed(0)}s`;
    if (Date.now() - started > timeoutMs) return `${line} when the settle time ran out`;
    await new Promise((r) => setTimeout(r, 2_000));
  }
}
