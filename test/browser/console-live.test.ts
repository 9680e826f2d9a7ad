// C15 and C16 in Chromium on the real app, PostgreSQL and Temporal: a delivery page shows a new attempt as it lands,
// the backlog and the review queue follow changes, all without a reload; the change streams are capped per session;
// the deliveries search retries the selected FAILED deliveries (audited as the signed-in person) and exports itself as
// CSV with the formula guard.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { callAs } from '../helpers/access.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { insertDelivery } from '../helpers/outbound.js';
import { waitFor } from '../helpers/wait.js';
import { sessions } from './session.js';
import { startWorld, type World } from './world.js';

let world: World;
const pages = sessions(() => world);

beforeAll(async () => {
  world = await startWorld('live');
}, 180_000);
afterAll(async () => {
  await pages.close();
  await world?.close();
});

/** A mark on the window: still there after a change means the page was updated in place, not reloaded. */
const mark = (page: import('playwright-core').Page) => page.evaluate('window.__notReloaded = true');
const stillMarked = (page: import('playwright-core').Page) => page.evaluate<boolean>('window.__notReloaded === true');

describe('C15 live pages', () => {
  it('C15 a delivery page shows the new attempt as it lands, without a reload', async () => {
    const { deliveryId } = await world.failedDelivery();
    const page = await pages.signIn('console', world.keys.operator.token);
    await page.goto(`${world.url}/console/deliveries/${deliveryId}`);
    expect(await page.locator('main').getAttribute('data-live')).toContain(`/console/live/deliveries/${deliveryId}?v=`);
    await expect(page.locator('#attempts').textContent()).resolves.toContain('No attempt yet');
    await page.locator('#live-status:text-is("live")').waitFor();
    await mark(page);
    // Someone else retries it (the admin API): the workflow attempts, the receiver answers 200.
    expect((await callAs(world.app, TEST_ADMIN_TOKEN, 'POST', `/webhook-deliveries/${deliveryId}/retry`)).status).toBe(202);
    // The page may first show the attempt in flight (reserved before its POST), then as it ended.
    await page.locator('#attempts tr[data-attempt]').waitFor({ timeout: 45_000 });
    await page.locator('#attempts tr[data-attempt]:has(.status-ok)').waitFor({ timeout: 30_000 });
    await expect(page.locator('#attempts tr[data-attempt]').textContent()).resolves.toContain('200');
    await page.locator('#delivery-facts .status:text-is("DELIVERED")').waitFor({ timeout: 30_000 });
    expect(await stillMarked(page)).toBe(true);
    await pages.shoot(page, 'delivery-live');
  });

  it('C15 the backlog and the review queue follow changes without a reload', async () => {
    const page = await pages.signIn('console', world.keys.operator.token);
    await page.goto(`${world.url}/console/backlog`);
    await page.locator('#live-status:text-is("live")').waitFor();
    const pending = async () => Number(await page.locator('tr[data-backlog="PENDING"] td.num').first().textContent());
    const before = await pending();
    await mark(page);
    // A delivery no workflow picks up: it stays PENDING.
    const endpoint = (await world.failedDelivery()).endpointId;
    await insertDelivery(world.database.db, { endpointId: endpoint, merchantAccount: world.merchant });
    await waitFor(async () => (await pending()) > before, 20_000, 'the backlog page to count the new PENDING delivery');
    expect(await stillMarked(page)).toBe(true);
    await pages.shoot(page, 'backlog-live');

    await page.goto(`${world.url}/console/reviews?provider=${world.provider}`);
    await page.locator('#live-status:text-is("live")').waitFor();
    await mark(page);
    const parked = await world.parked('7000');
    await page.locator(`tr[data-reconciliation="${parked.id}"]`).waitFor({ timeout: 20_000 });
    await expect(page.locator(`tr[data-reconciliation="${parked.id}"]`).textContent()).resolves.toContain(
      parked.paymentReference,
    );
    expect(await stillMarked(page)).toBe(true);
    await pages.shoot(page, 'reviews-live');
  });

  it('C15 A18 a session holds at most 6 change streams; the 7th is refused (429) and the stream carries no data', async () => {
    const page = await pages.signIn('console', world.keys.operator.token);
    await page.goto('about:blank'); // the sign-in's review page let go of its stream
    await new Promise((r) => setTimeout(r, 500));
    // Six streams held open until each has said `ready` (so the server counts them), read over plain HTTP with the
    // session's cookie: a timed wait raced the streams' start under load.
    const cookie = (await page.context().cookies(`${world.url}/console/live/backlog`))
      .map((k) => `${k.name}=${k.value}`)
      .join('; ');
    // The sign-in page's own stream may outlive its page for a moment under load: until the server lets go of it
    // a sixth stream is refused. A refused stream holds no slot, so only the refused ones are opened again; the
    // accepted ones stay open (aborting them would leave slots the server has not freed yet).
    const openOne = async () => {
      const abort = new AbortController();
      const res = await fetch(`${world.url}/console/live/backlog?max_seconds=60`, {
        headers: { cookie },
        signal: abort.signal,
      });
      let text = '';
      if (res.status === 200) {
        const reader = res.body!.getReader();
        while (!text.includes('event: ready')) {
          const chunk = await reader.read();
          if (chunk.done) break;
          text += new TextDecoder().decode(chunk.value);
        }
      } else text = await res.text();
      return { abort, status: res.status, text };
    };
    const held = (await Promise.all(Array.from({ length: 6 }, openOne))).filter((s) => s.status === 200);
    const refused: number[] = [];
    for (let tries = 0; held.length < 6 && tries < 40; tries++) {
      await new Promise((r) => setTimeout(r, 250));
      const again = await openOne();
      if (again.status === 200) held.push(again);
      else refused.push(again.status);
    }
    expect(refused.every((s) => s === 429)).toBe(true); // only ever the per-session cap, while the old stream lingered
    const aborts = held.map((s) => s.abort);
    const firstChunks = held;
    const seventh = await fetch(`${world.url}/console/live/backlog?max_seconds=3`, { headers: { cookie } });
    aborts.forEach((a) => a.abort());
    expect(seventh.status).toBe(429);
    expect(firstChunks.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const body = firstChunks[0]!.text;
    expect(body).toContain('event: ready');
    expect(body.split('\n').filter((l) => l.startsWith('data:') && l !== 'data: {}')).toEqual([]); // no figures, no ids
  });
});

describe('C16 bulk actions from the console', () => {
  it('C16 retries the selected FAILED deliveries, each audited as the signed-in operator, and comes back to the search', async () => {
    const a = await world.failedDelivery();
    const b = await world.failedDelivery();
    const c = await world.failedDelivery(); // not selected: stays FAILED
    const page = await pages.signIn('console', world.keys.operator.token);
    const search = `merchant_account=${world.merchant}&status=FAILED`;
    await page.goto(`${world.url}/console/deliveries?${search}`);
    await page.check(`tr[data-delivery="${a.deliveryId}"] input[type=checkbox]`);
    await page.check(`tr[data-delivery="${b.deliveryId}"] input[type=checkbox]`);
    await page.fill('#bulk-retry input[name=reason]', 'receiver fixed');
    await pages.shoot(page, 'deliveries-bulk');
    await page.click('#bulk-retry button[type=submit]');
    await expect(page.locator('.notice.ok').textContent()).resolves.toContain('Retry requested for 2 of 2 deliveries');
    const outcomes = await page
      .locator('#bulk-outcomes tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-delivery')));
    expect(outcomes.sort()).toEqual([a.deliveryId, b.deliveryId].sort());
    const back = new URL((await page.locator('text=← Back to the search').getAttribute('href'))!, world.url);
    expect(back.searchParams.get('merchant_account')).toBe(world.merchant);
    expect(back.searchParams.get('status')).toBe('FAILED');
    for (const id of [a.deliveryId, b.deliveryId]) {
      const audit = await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/audit-events?target_id=${id}`);
      expect(audit.json.data.map((e: { action: string; actor: { key_id: string } }) => [e.action, e.actor.key_id])).toEqual([
        ['delivery.retry', world.keys.operator.id],
      ]);
    }
    expect((await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/audit-events?target_id=${c.deliveryId}`)).json.data).toEqual([]);
    await waitFor(
      async () =>
        (await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/webhook-deliveries/${a.deliveryId}`)).json.status === 'DELIVERED',
      45_000,
      'the retried delivery to be DELIVERED',
    );
    expect((await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/webhook-deliveries/${c.deliveryId}`)).json.status).toBe('FAILED');
  });

  it('C16 a viewer gets no checkboxes or retry form; the export is the current search as CSV, formula-guarded, and audited', async () => {
    const { deliveryId, endpointId } = await world.failedDelivery();
    await world.database.db
      .update(webhookEndpoints)
      .set({ description: '=HYPERLINK("http://evil.example","x")' })
      .where(eq(webhookEndpoints.id, endpointId));
    const viewer = await pages.signIn('console', world.keys.viewer.token);
    await viewer.goto(`${world.url}/console/deliveries?endpoint_id=${endpointId}`);
    expect(await viewer.locator('input[type=checkbox]').count()).toBe(0);
    expect(await viewer.locator('#bulk-retry').count()).toBe(0);
    const href = (await viewer.locator('#export-csv').getAttribute('href'))!;
    expect(href).toBe(`/console/deliveries.csv?endpoint_id=${endpointId}`);
    const download = await viewer.context().request.get(`${world.url}${href}`);
    expect(download.status()).toBe(200);
    expect(download.headers()['content-disposition']).toMatch(/attachment; filename="deliveries-\d{4}-\d\d-\d\d\.csv"/);
    const lines = (await download.text()).trim().split('\r\n');
    expect(lines[0]).toBe(
      'delivery_id,status,event_id,event_type,payment_reference,endpoint_id,endpoint_url,endpoint_description,merchant_account,attempts,created_at,next_attempt_at,delivered_at,failed_at,failure_reason',
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`${deliveryId},FAILED,`);
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`); // R8: text, not a formula
    expect(lines[1]!.split(',')[4]).toBe(''); // a viewer's export has no payment reference (A19)
    const audit = await callAs(
      world.app,
      TEST_ADMIN_TOKEN,
      'GET',
      `/audit-events?target_id=csv&action=delivery.export&actor=${world.keys.viewer.id}`,
    );
    expect(audit.status).toBe(200);
    expect(
      audit.json.data.some(
        (e: { action: string; after: { filter: string } }) =>
          e.action === 'delivery.export' && e.after.filter === `endpoint_id=${endpointId}`,
      ),
    ).toBe(true);
  });
});
