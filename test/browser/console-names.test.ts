// C14 in Chromium on the real app, PostgreSQL and Temporal: names beside ids (endpoint description or URL, event type,
// payment reference), ids copied in one click, relative times with the exact time on hover, and a pager that keeps
// the search's filters; every page still readable without JavaScript.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookEndpoints } from '../../src/db/schema/index.js';
import { insertDelivery, insertEndpoint } from '../helpers/outbound.js';
import { sessions } from './session.js';
import { startWorld, type World } from './world.js';

let world: World;
const pages = sessions(() => world);

beforeAll(async () => {
  world = await startWorld('names');
}, 180_000);
afterAll(async () => {
  await pages.close();
  await world?.close();
});

describe('C14 names before ids', () => {
  it('C14 a delivery row names its endpoint and event, copies its id in one click and reads its time as "… ago"', async () => {
    const { deliveryId, eventId, endpointId } = await world.failedDelivery();
    await world.database.db
      .update(webhookEndpoints)
      .set({ description: 'Shop order hooks' })
      .where(eq(webhookEndpoints.id, endpointId));
    const page = await pages.signIn('console', world.keys.operator.token);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.url });
    await page.goto(`${world.url}/console/deliveries?merchant_account=${world.merchant}&status=FAILED`);
    const row = page.locator(`tr[data-delivery="${deliveryId}"]`);
    const text = (await row.textContent())!;
    expect(text).toContain('Shop order hooks'); // the endpoint's description …
    expect(text).toContain('/hooks'); // … and its URL
    expect(text).toContain(endpointId); // the ids stay, under the names
    expect(text).toContain('payment.succeeded'); // the event's type
    expect(text).toMatch(/pay_[0-9a-f]{8}/); // the payment it is about (operators read bodies)
    expect(text).toContain(eventId);
    const created = row.locator('time').first();
    await expect(created.textContent()).resolves.toMatch(/^(just now|\d+ (s|min) ago)$/);
    await expect(created.getAttribute('title')).resolves.toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(Date.parse((await created.getAttribute('datetime'))!)).toBeGreaterThan(Date.now() - 5 * 60_000);

    const copy = row.locator(`button.copy[data-copy="${deliveryId}"]`);
    await expect(copy.isVisible()).resolves.toBe(true);
    await copy.click();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(deliveryId);
    await expect(copy.textContent()).resolves.toBe('Copied');

    // The delivery's own page names both too, and its id is copyable there.
    await page.goto(`${world.url}/console/deliveries/${deliveryId}`);
    const facts = (await page.locator('#delivery-facts').textContent())!;
    expect(facts).toContain('Shop order hooks');
    expect(facts).toContain('payment.succeeded');
    await page.locator(`#delivery-facts button.copy[data-copy="${endpointId}"]`).click();
    await expect(page.evaluate<string>('navigator.clipboard.readText()')).resolves.toBe(endpointId);

    // A viewer sees the names but not the payment reference (it is read from the body, A1, A19).
    const viewer = await pages.signIn('console', world.keys.viewer.token);
    await viewer.goto(`${world.url}/console/deliveries?merchant_account=${world.merchant}&status=FAILED`);
    const seen = (await viewer.locator(`tr[data-delivery="${deliveryId}"]`).textContent())!;
    expect(seen).toContain('payment.succeeded');
    expect(seen).not.toMatch(/pay_[0-9a-f]{8}/);
  });

  it('C14 without JavaScript the ids are selectable text and no copy button shows; the CSP allows no inline script', async () => {
    const { deliveryId } = await world.failedDelivery();
    const page = await pages.signIn('console', world.keys.operator.token, { javaScriptEnabled: false });
    const response = await page.goto(`${world.url}/console/deliveries/${deliveryId}`);
    const csp = response!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(await page.locator('#delivery-facts code.id').first().textContent()).toBe(deliveryId);
    await expect(page.locator('button.copy').first().isVisible()).resolves.toBe(false);
    expect(await page.locator('script:not([src])').count()).toBe(0);
  });

  it('C14 relative times move on while the page stays open (the page script, every 15 s)', async () => {
    const { deliveryId } = await world.failedDelivery();
    const page = await pages.signIn('console', world.keys.operator.token);
    await page.clock.install(); // the page's timers and Date from here on are the test's
    await page.goto(`${world.url}/console/deliveries?merchant_account=${world.merchant}&status=FAILED`);
    const created = page.locator(`tr[data-delivery="${deliveryId}"] time`).first();
    await expect(created.textContent()).resolves.toMatch(/^(just now|\d+ s ago)$/);
    const title = await created.getAttribute('title');
    await page.clock.fastForward('10:00');
    await expect(created.textContent()).resolves.toBe('10 min ago');
    await expect(created.getAttribute('title')).resolves.toBe(title); // the exact time stays
  });

  it('C14 the pager keeps the search’s filters on the next page and offers the first page back', async () => {
    const endpoint = await insertEndpoint(world.database.db, {
      merchantAccount: world.otherMerchant,
      url: 'http://127.0.0.1:9/pager',
    });
    const ids: string[] = [];
    for (let i = 0; i < 53; i += 1)
      ids.push(
        (
          await insertDelivery(world.database.db, {
            endpointId: endpoint.id,
            merchantAccount: world.otherMerchant,
            type: 'refund.succeeded',
          })
        ).deliveryId,
      );
    const page = await pages.signIn('console', world.keys.operator.token);
    await page.goto(
      `${world.url}/console/deliveries?merchant_account=${world.otherMerchant}&event_type=refund.succeeded&order=asc`,
    );
    expect(await page.locator('tr[data-delivery]').count()).toBe(50);
    const next = new URL((await page.locator('a[rel=next]').getAttribute('href'))!, world.url);
    expect(Object.fromEntries(next.searchParams)).toMatchObject({
      merchant_account: world.otherMerchant,
      event_type: 'refund.succeeded',
      order: 'asc',
      after: ids[49],
    });
    await page.click('a[rel=next]');
    const second = await page
      .locator('tr[data-delivery]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-delivery')));
    expect(second).toEqual(ids.slice(50));
    await expect(page.locator('input[name=event_type]').inputValue()).resolves.toBe('refund.succeeded'); // the form keeps them too
    await page.click('text=← First page');
    expect(new URL(page.url()).searchParams.get('after')).toBeNull();
    expect(new URL(page.url()).searchParams.get('merchant_account')).toBe(world.otherMerchant);
  });

  it('C14 the portal names its deliveries’ endpoints and events the same way', async () => {
    const { deliveryId } = await world.failedDelivery();
    const page = await pages.signIn('portal', world.keys.merchant.token);
    await page.goto(`${world.url}/portal/deliveries?status=FAILED`);
    const text = (await page.locator(`tr[data-delivery="${deliveryId}"]`).textContent())!;
    expect(text).toContain('/hooks');
    expect(text).toContain('payment.succeeded');
    expect(text).toMatch(/pay_[0-9a-f]{8}/);
    await expect(page.locator(`tr[data-delivery="${deliveryId}"] time`).first().textContent()).resolves.toMatch(/ago|just now/);
  });
});
