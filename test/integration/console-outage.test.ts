// C17 on the real PostgreSQL: a merchant's endpoint goes down and comes back, recorded by the real attempt store
// (O7, O13, P12): six deliveries fail for twelve minutes (503s, a timeout) and are then delivered, which ends the
// failure streak and starts the recovery ramp. The endpoint's page then shows the outage band and the ramp on its
// charts, the backlog's figures (4 waiting, then 6, then 0) and the "Outage" panel (started at the first failure,
// ended at the first success, 14 failed attempts, peak 6, drained); the SQL backlog equals the rule of
// src/outbound/outage.ts on the same rows. The merchant sees the same page for its own endpoint; another merchant
// gets 404.
import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { createAttemptStore } from '../../src/outbound/attempt-store.js';
import type { AttemptOutcome } from '../../src/outbound/attempt-record.js';
import { backlogFromRows } from '../../src/outbound/outage.js';
import { endpointBacklog } from '../../src/outbound/outage-queries.js';
import { chartWindow } from '../../src/shared/chart-window.js';
import { createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { insertDelivery, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { testProfile } from '../helpers/profile.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'console-outage' });
const recovery = testProfile().outbound.recovery;
let app: ReturnType<typeof testApp>;
let account: string;
let admin: Caller;
let merchant: Caller;
let foreign: Caller;
let endpointId: string;
let firstFailure: Date;
let firstSuccess: Date;
let at: (m: number, s?: number) => Date;

const failure = (status: number | null): AttemptOutcome => ({
  succeeded: false,
  responseStatus: status,
  errorKind: status === null ? 'timeout' : 'server_error',
  errorMessage: status === null ? 'no answer in 10 s' : `HTTP ${status}`,
  excerpt: status === null ? null : 'temporarily unavailable',
  latencyMs: status === null ? 10_000 : 40,
});
const success: AttemptOutcome = {
  succeeded: true,
  responseStatus: 200,
  errorKind: null,
  errorMessage: null,
  excerpt: 'ok',
  latencyMs: 12,
};
const label = (d: Date) => d.toISOString().slice(11, 16);
const utc = (d: Date) => `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

beforeAll(async () => {
  app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('console-outage') });
  account = uniqueMerchant('outage');
  admin = await createKey(app, 'admin', undefined, 'outage-admin');
  merchant = await createKey(app, 'merchant', account, 'outage-merchant');
  foreign = await createKey(app, 'merchant', uniqueMerchant('outage-other'), 'outage-foreign');
  endpointId = (await insertEndpoint(world.db, { merchantAccount: account, url: 'http://127.0.0.1:9/shop' })).id;
  const store = createAttemptStore({ db: world.db, logger: testLogger, autoDisableAfterMs: 7 * 86_400_000, recovery });

  // Minute boundaries keep each step in its own 1-minute bucket whatever second the test starts at.
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  at = (m: number, s = 0) => new Date(minute - m * 60_000 + s * 1000); // m minutes before this minute
  const created = async (when: Date) =>
    (await insertDelivery(world.db, { endpointId, merchantAccount: account, delivery: { createdAt: when } })).deliveryId;
  const attempt = async (deliveryId: string, n: number, when: Date, outcome: AttemptOutcome) => {
    const input = { deliveryId, attemptNumber: n, scheduledAt: when.getTime(), retryInMs: 60_000 };
    const reservation = await store.reserve(input, when);
    if (reservation.kind !== 'reserved') throw new Error(`attempt ${n} of ${deliveryId} not reserved`);
    await store.record(input, reservation.attemptId, endpointId, outcome);
  };

  const early = [];
  for (let i = 0; i < 4; i++) early.push(await created(at(14, 5)));
  firstFailure = at(14, 10);
  for (const id of early) await attempt(id, 1, firstFailure, failure(503)); // 4 failures
  for (const id of early) await attempt(id, 2, at(12, 10), failure(503)); // 8
  const late = [await created(at(11, 5)), await created(at(11, 6))];
  for (const id of late) await attempt(id, 1, at(11, 10), failure(null)); // 10
  for (const id of early) await attempt(id, 3, at(7, 10), failure(503)); // 14
  // The merchant is back: every delivery goes through now, the first success ends the O13 streak and starts the ramp.
  firstSuccess = new Date();
  const all = [...early, ...late];
  for (const [i, id] of all.entries()) await attempt(id, i < 4 ? 4 : 2, i === 0 ? firstSuccess : new Date(), success);
});

async function signedIn(surface: 'portal' | 'console', caller: Caller) {
  const browser = pageClient(app);
  await browser.get(`/${surface}/sign-in`);
  expect((await browser.post(`/${surface}/sign-in`, { token: caller.token })).status).toBe(303);
  return browser;
}

/** A chart's figures table: the header cells and each row's cells. */
function figures(page: string, chart: string) {
  const table = page.match(new RegExp(`<table data-chart-table="${chart}">([\\s\\S]*?)</table>`))?.[1] ?? '';
  const cells = (row: string, tag: string) =>
    [...row.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
  const [head, body] = [
    table.match(/<thead>([\s\S]*?)<\/thead>/)?.[1] ?? '',
    table.match(/<tbody>([\s\S]*?)<\/tbody>/)?.[1] ?? '',
  ];
  return { head: cells(head, 'th'), rows: [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => cells(m[1]!, 'td')) };
}

describe('C17 an outage and its recovery on the endpoint page', () => {
  it('C17 the endpoint row carries the recovery, and the SQL backlog equals the rule on the same deliveries', async () => {
    const [endpoint] = await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId));
    expect(endpoint!.failingSince).toBeNull();
    expect(endpoint!.recoveringSince).not.toBeNull(); // P12: twelve minutes failing, then a 2xx
    const rows = await world.db
      .select({
        created: deliveries.createdAt,
        final: sql<string | null>`coalesce(${deliveries.deliveredAt}, ${deliveries.failedAt})`,
      })
      .from(deliveries)
      .where(eq(deliveries.endpointId, endpointId));
    expect(rows).toHaveLength(6);
    const now = new Date();
    for (const range of ['15m', '1h', '6h'] as const) {
      const w = chartWindow(range, now);
      const reference = backlogFromRows(
        w,
        now,
        rows.map((r) => ({ created: r.created, final: r.final ? new Date(r.final) : null })),
      );
      expect(await endpointBacklog(world.db, endpointId, w, now), range).toEqual(reference);
    }
  });

  it('C17 the console page shades the outage and the ramp, charts the backlog and gives the outage in words', async () => {
    const browser = await signedIn('console', admin);
    const page = (await browser.get(`/console/endpoints/${endpointId}?range=1h`)).text;
    // The panel.
    expect(page).toContain('data-outage="ended"');
    expect(page).toMatch(
      new RegExp(`data-outage-started>\\s*<span data-at="${firstFailure.toISOString()}">${utc(firstFailure)}`),
    );
    expect(page).toMatch(/data-outage-ended>\s*<span data-at="[^"]+">/);
    expect(page).toContain(`<span data-at="${firstSuccess.toISOString()}">`);
    expect(page).toMatch(/data-outage-failed>14</);
    expect(page).toMatch(/data-outage-peak>6 waiting</);
    expect(page).toMatch(/data-outage-drained>\s*<span data-at=/);
    expect(page).toMatch(/data-outage-ramp>/);
    // The bands, on the attempts, backlog and drain charts, with their titles.
    for (const chart of ['attempts', 'endpoint-backlog', 'endpoint-drain'])
      expect(page).toMatch(
        new RegExp(`data-chart="${chart}"[\\s\\S]*?<rect\\s+data-band="outage"[\\s\\S]*?<title>outage \\d\\d:\\d\\d–`),
      );
    expect(page).toMatch(/<rect\s+data-band="ramp"[\s\S]*?<title>recovery ramp /);
    // The figures: 14 failed attempts in the outage's buckets, the backlog 4, then 6, then drained.
    const attempts = figures(page, 'attempts');
    expect(attempts.head).toEqual(['Time', '2xx', '4xx', '5xx', 'timeout', 'no answer', 'Marked']);
    const marked = attempts.rows.filter((r) => r[6]!.includes('outage'));
    expect(marked.reduce((a, r) => a + Number(r[3]) + Number(r[4]), 0)).toBe(14);
    expect(marked).toHaveLength(14); // from the first failure's minute to the minute before the first success
    expect(marked[0]![0]).toBe(label(at(14)));
    const backlog = figures(page, 'endpoint-backlog');
    expect(backlog.head).toEqual(['Time', 'waiting', 'Marked']);
    const waitingAt = (d: Date) => Number(backlog.rows.find((r) => r[0] === label(d))![1]);
    expect(waitingAt(at(14))).toBe(4); // at the end of the first failure's minute
    expect(waitingAt(at(11))).toBe(6); // two more arrived
    expect(waitingAt(at(1))).toBe(6); // still all waiting a minute before the recovery
    expect(Math.max(...backlog.rows.map((r) => Number(r[1])))).toBe(6);
    expect(Number(backlog.rows.at(-1)![1])).toBe(0); // drained now
    const oldest = figures(page, 'endpoint-oldest');
    expect(oldest.rows.find((r) => r[0] === label(at(1)))![1]).toMatch(/^1[34]\.\d min$/); // 13 min 55 s by then
    const drain = figures(page, 'endpoint-drain');
    expect(drain.head).toEqual(['Time', 'delivered', 'ramp allowance', 'Marked']);
    const recovered = drain.rows.find((r) => r[0] === label(firstSuccess))!;
    expect(Number(recovered[1])).toBe(6);
    expect(recovered[2]).not.toBe('—'); // the ramp's allowance beside the six delivered
    expect(page).toContain('aria-labelledby="endpoint-backlog-title endpoint-backlog-desc"');
  });

  it('C17 the finer ranges draw the same outage, and the merchant sees its own page; another merchant gets 404', async () => {
    const console_ = await signedIn('console', admin);
    const fine = (await console_.get(`/console/endpoints/${endpointId}?range=15m`)).text;
    expect(fine).toContain('data-range="15m"');
    expect(figures(fine, 'endpoint-backlog').rows).toHaveLength(60);
    expect(fine).toMatch(/data-outage="ended"/); // its start may be just before these 15 minutes
    expect(figures((await console_.get(`/console/endpoints/${endpointId}?range=6h`)).text, 'attempts').rows).toHaveLength(72);

    const own = await signedIn('portal', merchant);
    const portalPage = await own.get(`/portal/endpoints/${endpointId}`);
    expect(portalPage.status).toBe(200);
    expect(portalPage.text).toMatch(/data-outage-peak>6 waiting</);
    expect(portalPage.text).toContain('data-band="outage"');
    const other = await signedIn('portal', foreign);
    const refused = await other.get(`/portal/endpoints/${endpointId}`);
    expect(refused.status).toBe(404);
    expect(refused.text).not.toContain('data-outage');
  });
});
