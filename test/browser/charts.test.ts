// C12, C13 in a real Chromium on the real API app, PostgreSQL and Temporal: an endpoint that always answers 503 (the
// demo's /always-503) shows at a glance as a red series on its console page and a red sparkline on its merchant's
// portal home, which also lists its failures grouped by answer and the deliveries waiting to retry; the backlog chart
// shows retries draining; the review-queue and ledger charts render; the range links switch the window; no chart
// breaks the CSP; another merchant's portal shows none of it. C17: the failing endpoint's page shades its ongoing
// outage and says so in its Outage panel, with the delivery waiting to retry as its backlog. With
// CONSOLE_SCREENSHOTS=<dir> the pages are saved.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { eq, inArray, sql } from 'drizzle-orm';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backlogSamples, deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { sampleBacklog } from '../../src/inbound/backlog-history.js';
import { DELIVERY_WORKFLOW } from '../../src/shared/outbound.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver } from '../helpers/outbound.js';
import { waitFor } from '../helpers/wait.js';
import { startWorld, type World } from './world.js';

let world: World;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const contexts: BrowserContext[] = [];
const shots = process.env.CONSOLE_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });
const RED = '#d12c2c';
let failing: { id: string; deliveryIds: string[] };
let healthy: { id: string };
let waiting: string;

beforeAll(async () => {
  world = await startWorld('charts');
  receiver = await startReceiver((r) =>
    r.path.startsWith('/always-503') ? { status: 503, body: 'temporarily unavailable' } : { status: 200, body: 'ok' },
  );
  // The demo's two endpoints: /always-503 fails every attempt, /shop answers 200.
  const dead = await insertEndpoint(world.database.db, { merchantAccount: world.merchant, url: `${receiver.url}/always-503` });
  const shop = await insertEndpoint(world.database.db, { merchantAccount: world.merchant, url: `${receiver.url}/shop` });
  const sent: string[] = [];
  for (const endpointId of [dead.id, dead.id, shop.id]) {
    const { deliveryId } = await insertDelivery(world.database.db, { endpointId, merchantAccount: world.merchant });
    await world.temporal.client.workflow.start(DELIVERY_WORKFLOW, {
      workflowId: deliveryId,
      taskQueue: world.taskQueues.delivery,
      args: [{ deliveryId, retryScheduleMs: [100, 100] }],
    });
    sent.push(deliveryId);
  }
  // The real delivery worker sends them: three 503s for each of the dead endpoint's deliveries, one 200 for the shop.
  await waitFor(
    async () => {
      const rows = await world.database.db.select().from(deliveries).where(inArray(deliveries.id, sent));
      return rows.every((r) => r.status === 'FAILED' || r.status === 'DELIVERED');
    },
    60_000,
    'the deliveries to finish',
  );
  failing = { id: dead.id, deliveryIds: sent.slice(0, 2) };
  healthy = { id: shop.id };
  // One delivery of the merchant waits for its next attempt in 7 minutes.
  const w = await insertDelivery(world.database.db, { endpointId: dead.id, merchantAccount: world.merchant });
  await world.database.db
    .update(deliveries)
    .set({ status: 'RETRYING', attemptCount: 2, nextAttemptAt: new Date(Date.now() + 7 * 60_000) })
    .where(eq(deliveries.id, w.deliveryId));
  waiting = w.deliveryId;
}, 180_000);
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await receiver?.close();
  await world?.close();
});

/** A page that fails the test on a dialog (a script ran) and records CSP refusals from the console. */
async function newPage(): Promise<{ page: Page; refusals: string[] }> {
  const context = await world.browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  const refusals: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) refusals.push(m.text());
  });
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
  return { page, refusals };
}

async function signIn(surface: 'console' | 'portal', token: string) {
  const opened = await newPage();
  await opened.page.goto(`${world.url}/${surface}/sign-in`);
  await opened.page.fill('input[name=token]', token);
  await opened.page.click('button[type=submit]');
  await opened.page.waitForURL((u) => !u.pathname.endsWith('/sign-in'));
  return opened;
}

const shoot = async (page: Page, name: string) => {
  if (shots) await page.screenshot({ path: join(shots, `console-${name}.png`), fullPage: true });
};

/** The figures of a chart's table: header names and rows of cell texts. */
async function figures(page: Page, chart: string) {
  const table = page.locator(`table[data-chart-table="${chart}"]`);
  const head = await table.locator('thead th').allTextContents();
  const rows = await table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
  return { head, rows };
}

describe('C12 charts in Chromium', () => {
  it('C12 the failing endpoint’s page shows its attempts as a red 5xx series, its latency, and the range links switch the window', async () => {
    const { page, refusals } = await signIn('console', TEST_ADMIN_TOKEN);
    await page.goto(`${world.url}/console/endpoints/${failing.id}`);
    const chart = page.locator('figure[data-chart="attempts"]');
    await expect(chart.locator('figcaption').textContent()).resolves.toContain('last hour');
    // At a glance: red bars, drawn (a real box), titled with their count.
    const red = chart.locator(`svg.chart rect[fill="${RED}"]`);
    expect(await red.count()).toBeGreaterThan(0);
    expect((await red.first().boundingBox())!.height).toBeGreaterThan(5);
    expect(await chart.locator(`svg.chart rect[fill="${RED}"] title`).first().textContent()).toMatch(/5xx: \d+/);
    expect(await chart.locator('svg.chart rect[fill="#2e9e5b"]').count()).toBe(0); // no success at all
    const { head, rows } = await figures(page, 'attempts');
    expect(head).toEqual(['Time', '2xx', '4xx', '5xx', 'timeout', 'no answer', 'Marked']);
    expect(rows).toHaveLength(60);
    expect(rows.reduce((a, r) => a + Number(r[3]), 0)).toBe(6); // two deliveries × three 503s
    // C17: no attempt has succeeded, so the outage is ongoing: a shaded band from the first 503 to now, on every
    // chart of the page, and the panel in words; the delivery waiting to retry is the backlog now.
    const band = chart.locator('svg.chart rect[data-band="outage"]');
    expect(await band.count()).toBe(1);
    expect((await band.boundingBox())!.width).toBeGreaterThan(5);
    expect(await band.locator('title').textContent()).toMatch(/^outage \d\d:\d\d–now: every attempt failed \(6\)$/);
    expect(rows.filter((r) => r[6] === 'outage').length).toBeGreaterThan(0);
    const panel = page.locator('section[data-outage="ongoing"]');
    await expect(panel.locator('[data-outage-failed]').textContent()).resolves.toBe('6');
    await expect(panel.locator('[data-outage-ended]').textContent()).resolves.toContain('ongoing');
    const [row] = await world.database.db
      .select({ since: webhookEndpoints.failingSince })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, failing.id));
    // An ongoing outage started when the endpoint's O13 streak did.
    await expect(panel.locator('[data-outage-started] span[data-at]').getAttribute('data-at')).resolves.toBe(
      row!.since!.toISOString(),
    );
    expect(await page.locator('figure[data-chart="endpoint-backlog"] svg.chart rect[data-band="outage"]').count()).toBe(1);
    const backlog = await figures(page, 'endpoint-backlog');
    expect(backlog.head).toEqual(['Time', 'waiting', 'Marked']);
    expect(backlog.rows.at(-1)![1]).toBe('1');
    expect(backlog.rows.at(-1)![2]).toBe('outage');
    const latency = await figures(page, 'latency');
    expect(latency.head).toEqual(['Time', 'p50', 'p99', 'Marked']); // C17: the outage's buckets are marked
    expect(latency.rows.some((r) => /\d+ ms/.test(r[1]!))).toBe(true);
    await shoot(page, 'charts-endpoint');

    await page.click('nav.ranges a[data-range="24h"]');
    expect(new URL(page.url()).searchParams.get('range')).toBe('24h');
    await expect(page.locator('nav.ranges a[aria-current="page"]').textContent()).resolves.toContain('last 24 h');
    expect((await figures(page, 'attempts')).rows).toHaveLength(96);
    await page.click('nav.ranges a[data-range="7d"]');
    expect((await figures(page, 'attempts')).rows).toHaveLength(84);

    // The healthy endpoint: green, no red.
    await page.goto(`${world.url}/console/endpoints/${healthy.id}`);
    expect(await page.locator('figure[data-chart="attempts"] svg.chart rect[fill="#2e9e5b"]').count()).toBeGreaterThan(0);
    expect(await page.locator(`figure[data-chart="attempts"] svg.chart rect[fill="${RED}"]`).count()).toBe(0);
    expect(refusals).toEqual([]);
  });

  it('C12 the backlog chart shows the retries draining, with the oldest RETRYING age', async () => {
    // Three minutes of samples while four RETRYING deliveries drain, two a minute (the API's sampler does this live).
    const rows = [];
    for (let i = 0; i < 4; i++)
      rows.push(
        (await insertDelivery(world.database.db, { endpointId: healthy.id, merchantAccount: world.merchant })).deliveryId,
      );
    const now = Date.now();
    const minute = (ago: number) => new Date(Math.floor(now / 60_000) * 60_000 - ago * 60_000);
    await world.database.db.delete(backlogSamples).where(sql`minute >= ${minute(3).toISOString()}::timestamptz`);
    await world.database.db.update(deliveries).set({ status: 'RETRYING' }).where(inArray(deliveries.id, rows));
    await sampleBacklog(world.database.db, minute(3));
    await world.database.db
      .update(deliveries)
      .set({ status: 'DELIVERED' })
      .where(inArray(deliveries.id, rows.slice(0, 2)));
    await sampleBacklog(world.database.db, minute(2));
    await world.database.db
      .update(deliveries)
      .set({ status: 'DELIVERED' })
      .where(inArray(deliveries.id, rows.slice(2)));
    await sampleBacklog(world.database.db, minute(1));

    const { page, refusals } = await signIn('console', world.keys.viewer.token);
    await page.goto(`${world.url}/console/backlog`);
    const { head, rows: table } = await figures(page, 'outbound-backlog');
    expect(head).toEqual(['Time', 'PENDING', 'RETRYING']);
    const retrying = table.filter((r) => r[2] !== '—').map((r) => Number(r[2]));
    expect(retrying.length).toBeGreaterThanOrEqual(3);
    const [a, b, c] = retrying.slice(-3) as [number, number, number];
    expect([a - b, b - c]).toEqual([2, 2]); // draining
    expect(
      await page.locator(`figure[data-chart="outbound-backlog"] svg.chart polyline[stroke="${RED}"]`).count(),
    ).toBeGreaterThan(0);
    expect((await figures(page, 'outbound-oldest')).head).toEqual(['Time', 'oldest PENDING', 'oldest RETRYING']);
    await shoot(page, 'charts-backlog');

    await page.goto(`${world.url}/console/reviews`);
    expect((await figures(page, 'review-queue')).head).toEqual(['Time', 'waiting for review', 'acknowledged, not started']);
    expect(await page.locator('figure[data-chart="review-oldest"]').count()).toBe(1);

    await page.goto(`${world.url}/console/ledger`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Ledger');
    expect(await page.locator('figure[data-chart="ledger-postings"]').count()).toBe(1);
    expect((await figures(page, 'ack-ledger-lag')).head).toEqual(['Time', 'p50', 'p99']);
    await shoot(page, 'charts-ledger');
    expect(refusals).toEqual([]);
  });
});

describe('C13 the portal home in Chromium', () => {
  it('C13 the merchant signs in to its health: a red sparkline for the failing endpoint, failures by answer, what waits and when', async () => {
    const { page, refusals } = await signIn('portal', world.keys.merchant.token);
    expect(new URL(page.url()).pathname).toBe('/portal');
    await expect(page.locator('h1').textContent()).resolves.toBe('Health');
    const dead = page.locator(`table[data-home="endpoints"] tr[data-endpoint="${failing.id}"]`);
    expect(await dead.locator('svg.sparkline').getAttribute('data-latest')).toBe('0');
    // At a glance: this hour's column of the 24-column strip is red and full height (nothing succeeded).
    const column = dead.locator(`svg.sparkline rect[fill="${RED}"]`);
    expect(await column.count()).toBe(1);
    expect((await column.boundingBox())!.height).toBeGreaterThanOrEqual(20);
    expect((await column.boundingBox())!.width).toBeGreaterThanOrEqual(6);
    await expect(dead.textContent()).resolves.toContain('0.0 %');
    const shop = page.locator(`table[data-home="endpoints"] tr[data-endpoint="${healthy.id}"]`);
    expect(await shop.locator('svg.sparkline').getAttribute('data-latest')).toBe('100');
    expect(await shop.locator(`svg.sparkline [stroke="${RED}"]`).count()).toBe(0);

    const failure = page.locator(`table[data-home="failures"] tr[data-failure="${failing.id} 503"]`);
    await expect(failure.textContent()).resolves.toMatch(/HTTP 503\s*6/);
    expect(await page.locator(`table[data-home="failures"] tr[data-failure^="${healthy.id}"]`).count()).toBe(0);

    const next = page.locator(`table[data-home="waiting"] tr[data-waiting="${waiting}"]`);
    await expect(next.textContent()).resolves.toMatch(/RETRYING\s*2\s*.*in [67] min/s);
    await shoot(page, 'charts-portal-home');
    await page.click(`table[data-home="waiting"] tr[data-waiting="${waiting}"] a[href$="${waiting}"]`);
    expect(new URL(page.url()).pathname).toBe(`/portal/deliveries/${waiting}`);
    expect(refusals).toEqual([]);
  });

  it('C13 another merchant’s portal home shows none of this merchant’s endpoints, failures or waiting deliveries', async () => {
    const { createKey } = await import('../helpers/access.js');
    const other = await createKey(world.app, 'merchant', world.otherMerchant, 'other-shop');
    const { page } = await signIn('portal', other.token);
    await expect(page.locator('h1').textContent()).resolves.toBe('Health');
    const body = (await page.locator('main').textContent())!;
    for (const id of [failing.id, healthy.id, waiting]) expect(body).not.toContain(id);
    expect(await page.locator(`a[href*="${failing.id}"]`).count()).toBe(0);
    expect((await page.goto(`${world.url}/portal/endpoints/${failing.id}`))!.status()).toBe(404);
  });
});
