// C3: the operator console (C1) and the merchant portal (C2) in a real Chromium, on the real API app, PostgreSQL and
// Temporal. With CONSOLE_SCREENSHOTS=<dir> (npm run console:screenshots) each page is also saved as a PNG there.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorResolutionSignal, reconciliationStateQuery } from '../../src/shared/inbound.js';
import { callAs, createKey } from '../helpers/access.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { waitFor } from '../helpers/wait.js';
import { startWorld, type World } from './world.js';

let world: World;
const contexts: BrowserContext[] = [];
const shots = process.env.CONSOLE_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });

beforeAll(async () => {
  world = await startWorld('browser');
}, 180_000);
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await world?.close();
});

async function newPage(): Promise<Page> {
  const context = await world.browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`); // a script ran: escaping failed
  });
  return page;
}

async function signIn(surface: 'console' | 'portal', token: string): Promise<Page> {
  const page = await newPage();
  await page.goto(`${world.url}/${surface}`);
  expect(page.url()).toBe(`${world.url}/${surface}/sign-in`);
  await page.fill('input[name=token]', token);
  await shoot(page, `${surface}-sign-in`);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => !u.pathname.endsWith('/sign-in'));
  return page;
}

const shoot = async (page: Page, name: string) => {
  if (shots) await page.screenshot({ path: join(shots, `console-${name}.png`), fullPage: true });
};

describe('C1 operator console in Chromium', () => {
  it('C1 signs in with the ADMIN_TOKEN, finds a FAILED delivery, retries it and sees it DELIVERED', async () => {
    const { deliveryId, endpointId } = await world.failedDelivery();
    const page = await signIn('console', TEST_ADMIN_TOKEN);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'apipay_console')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookie.value).not.toContain(TEST_ADMIN_TOKEN);

    await page.goto(`${world.url}/console/deliveries`);
    await page.fill('input[name=merchant_account]', world.merchant);
    await page.selectOption('select[name=status]', 'FAILED');
    await page.click('form.search button');
    await expect(page.locator(`tr[data-delivery="${deliveryId}"]`).textContent()).resolves.toContain('FAILED');
    await shoot(page, 'deliveries');

    await page.click(`tr[data-delivery="${deliveryId}"] a[href$="${deliveryId}"]`);
    expect(await page.locator('a.temporal').getAttribute('href')).toBe(
      `http://127.0.0.1:8233/namespaces/default/workflows/${deliveryId}`,
    );
    await page.click('button:has-text("Retry now")');
    await expect(page.locator('.notice.ok').textContent()).resolves.toContain('Retry requested');
    await waitFor(
      async () => {
        await page.reload();
        return (await page.locator('dl .status').first().textContent()) === 'DELIVERED';
      },
      45_000,
      'the page to show DELIVERED',
    );
    const attempts = await page.locator('table tbody tr').allTextContents();
    expect(attempts.some((row) => row.includes('200') && row.includes('OK'))).toBe(true);
    await shoot(page, 'delivery');
    // A3: the console's retry is audited like the admin API's, as the signed-in principal.
    const audit = await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/audit-events?target_id=${deliveryId}`);
    expect(audit.json.data.map((e: { actor: { key_id: string } }) => e.actor.key_id)).toEqual(['bootstrap']);

    await page.goto(`${world.url}/console/endpoints/${endpointId}`);
    await expect(page.locator('dl').textContent()).resolves.toMatch(/Success, last hour\s*100\.0 % of 1/);
    await shoot(page, 'endpoint');
    await page.goto(`${world.url}/console/endpoints?merchant_account=${world.merchant}`);
    await expect(page.locator(`tr[data-endpoint="${endpointId}"]`).textContent()).resolves.toContain('100.0 %');
    await shoot(page, 'endpoints');
  });

  it('C1 resolves a manual review from the queue, posting the amount chosen (C6: a refused signal is shown)', async () => {
    const parked = await world.parked('5000');
    const page = await signIn('console', world.keys.operator.token);
    await page.goto(`${world.url}/console/reviews?provider=${world.provider}`);
    const row = page.locator(`tr[data-reconciliation="${parked.id}"]`);
    const text = (await row.textContent())!;
    expect(text).toContain(parked.paymentReference);
    expect(text).toContain('EUR 50.00'); // the webhook's amount …
    expect(text).toContain('EUR 49.00'); // … beside the provider's
    await shoot(page, 'reviews');

    // C6: a signal with bad input leaves a trace the console shows on the item.
    const handle = world.temporal.client.workflow.getHandle(parked.id);
    await handle.signal(operatorResolutionSignal, { decision: 'approve' } as never);
    await waitFor(
      async () => ((await handle.query(reconciliationStateQuery)).refusedResolutions ?? []).length > 0,
      30_000,
      'the refusal',
    );
    await row.locator('a').click();
    await expect(page.locator('#refusals').textContent()).resolves.toContain('signal');
    await page.check('input[name=decision][value=applied]');
    await page.check('input[name=post][value=webhook]');
    await page.fill('textarea[name=reason]', 'customer paid the full amount; receipt attached');
    await shoot(page, 'review');
    await page.click('#resolve button');
    await expect(page.locator('.notice.ok').textContent()).resolves.toContain('Resolved');
    const detail = await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/reconciliations/${encodeURIComponent(parked.id)}`);
    expect(detail.json.state).toBe('applied');
    expect(detail.json.resolution).toMatchObject({
      decision: 'applied',
      post_basis: 'webhook',
      posted_amount_minor: '5000',
      operator: 'alice', // A2: the signed-in key
    });
  });

  it('C1 refuses a form without its CSRF token (403) and accepts the same form with it', async () => {
    const { deliveryId } = await world.failedDelivery();
    const page = await signIn('console', world.keys.operator.token);
    await page.goto(`${world.url}/console/deliveries/${deliveryId}`);
    await page
      .locator('input[name=csrf]')
      .evaluateAll((inputs) => inputs.forEach((input) => (input as { remove(): void }).remove()));
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/retry')),
      page.click('button:has-text("Retry now")'),
    ]);
    expect(refused.status()).toBe(403);
    await expect(page.locator('.notice.error').textContent()).resolves.toContain('CSRF');
    // The same request from outside the page (the cookie alone) is refused too; nothing was retried.
    const forged = await page
      .context()
      .request.post(`${world.url}/console/deliveries/${deliveryId}/retry`, { form: { reason: 'x' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    const huge = await page.context().request.post(`${world.url}/console/deliveries/${deliveryId}/retry`, {
      form: { reason: 'x'.repeat(100_000) },
      maxRedirects: 0,
    });
    expect(huge.status()).toBe(413); // a form is a few fields: a large body is refused before it is read
    const still = await callAs(world.app, TEST_ADMIN_TOKEN, 'GET', `/webhook-deliveries/${deliveryId}`);
    expect(still.json.status).toBe('FAILED');

    await page.goto(`${world.url}/console/deliveries/${deliveryId}`);
    const [accepted] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/retry')),
      page.click('button:has-text("Retry now")'),
    ]);
    expect(accepted.status()).toBe(303);
  });

  it('C1 shows an event body holding <script> as text, and hides bodies from a viewer', async () => {
    const { eventId } = await world.eventWithText('<script>alert("x")</script><img src=x onerror=alert(1)>');
    const page = await signIn('console', world.keys.operator.token);
    await page.goto(`${world.url}/console/events/${eventId}`);
    await expect(page.locator('#event-body').textContent()).resolves.toContain(
      '<script>alert(\\"x\\")</script><img src=x onerror=alert(1)>',
    );
    // The only script element is the app's own file (C14, C15); the body's <script> is text.
    expect(await page.locator('script').evaluateAll((all) => all.map((e) => e.getAttribute('src')))).toEqual([
      '/console/assets/console.js',
    ]);
    expect(await page.locator('main img').count()).toBe(0);
    const response = await page.context().request.get(`${world.url}/console/events/${eventId}`);
    expect(response.headers()['content-security-policy']).toContain("default-src 'none'");
    await shoot(page, 'event');

    const viewer = await signIn('console', world.keys.viewer.token);
    await viewer.goto(`${world.url}/console/events/${eventId}`);
    expect(await viewer.locator('#event-body').count()).toBe(0);
    await expect(viewer.locator('main').textContent()).resolves.toContain('Bodies are not shown');
    expect(await viewer.locator('button:has-text("Retry now")').count()).toBe(0);
    // The role is enforced on the POST too, not only by hiding the button: a viewer's valid form is refused.
    const { deliveryId } = await world.failedDelivery();
    await viewer.goto(`${world.url}/console/deliveries/${deliveryId}`);
    expect(await viewer.locator('button:has-text("Retry now")').count()).toBe(0);
    const csrf = (await viewer.locator('input[name=csrf]').first().getAttribute('value'))!;
    const refused = await viewer
      .context()
      .request.post(`${world.url}/console/deliveries/${deliveryId}/retry`, { form: { csrf }, maxRedirects: 0 });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('role viewer may not');
  });

  it('C1 signs out a session whose key is revoked, and on sign-out', async () => {
    const key = await createKey(world.app, 'operator', undefined, 'revoked-soon');
    const page = await signIn('console', key.token);
    await page.goto(`${world.url}/console/backlog`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Backlog');
    await shoot(page, 'backlog');
    expect((await callAs(world.app, TEST_ADMIN_TOKEN, 'POST', `/api-keys/${key.id}/revoke`)).status).toBe(200);
    await page.goto(`${world.url}/console/backlog`);
    expect(page.url()).toBe(`${world.url}/console/sign-in`);

    const other = await signIn('console', world.keys.operator.token);
    await other.click('header button:has-text("Sign out")');
    await other.goto(`${world.url}/console/reviews`);
    expect(other.url()).toBe(`${world.url}/console/sign-in`);
  });
});

describe('C2 merchant portal in Chromium', () => {
  it('C2 a merchant key sees its own deliveries and gets 404 for another merchant’s', async () => {
    const own = await world.failedDelivery(world.merchant);
    const foreign = await world.failedDelivery(world.otherMerchant);
    const page = await signIn('portal', world.keys.merchant.token);
    await page.goto(`${world.url}/portal/deliveries`);
    expect(await page.locator(`tr[data-delivery="${own.deliveryId}"]`).count()).toBe(1);
    expect(await page.locator(`tr[data-delivery="${foreign.deliveryId}"]`).count()).toBe(0);
    await shoot(page, 'portal-deliveries');
    for (const path of [`/deliveries/${foreign.deliveryId}`, `/events/${foreign.eventId}`, `/endpoints/${foreign.endpointId}`]) {
      const response = await page.goto(`${world.url}/portal${path}`);
      expect(response!.status(), path).toBe(404);
    }
    const response = await page.goto(`${world.url}/portal/endpoints/${own.endpointId}`);
    expect(response!.status()).toBe(200);
    await page.click('button:has-text("Rotate signing secret")');
    await expect(page.locator('#new-secret').textContent()).resolves.toMatch(/^whsec_/);
    // M6 from the portal: a signed ping, a delivery of this merchant's like any other.
    await page.click('button:has-text("Send test event")');
    const sent = /Test event sent: delivery (whd_\w+)/.exec((await page.locator('body').textContent()) ?? '');
    expect(sent, 'the test delivery named on the page').not.toBeNull();
    expect((await page.goto(`${world.url}/portal/deliveries/${sent![1]}`))!.status()).toBe(200);
    await page.click('a[href*="/portal/events/evt_"]');
    expect(await page.locator('body').textContent()).toContain('ping');
    // The merchant key does not open the operator console.
    const consolePage = await newPage();
    await consolePage.goto(`${world.url}/console/sign-in`);
    await consolePage.fill('input[name=token]', world.keys.merchant.token);
    const [refused] = await Promise.all([
      consolePage.waitForResponse((r) => r.request().method() === 'POST'),
      consolePage.click('button[type=submit]'),
    ]);
    expect(refused.status()).toBe(401);
  });

  it('C2 a signed portal link opens one merchant’s portal; a tampered one does not', async () => {
    const own = await world.failedDelivery(world.merchant);
    const link = await callAs(world.app, world.keys.operator.token, 'POST', '/portal-links', {
      merchant_account: world.merchant,
    });
    expect(link.status).toBe(201);
    const url = new URL(link.json.url);
    const page = await newPage();
    await page.goto(`${world.url}${url.pathname}${url.search}`);
    // A16: the GET only asks; the button's POST signs in.
    expect(await page.locator('header .who').count()).toBe(0);
    await page.click('button[type=submit]');
    await page.waitForURL(`${world.url}/portal/deliveries`);
    expect(await page.locator(`tr[data-delivery="${own.deliveryId}"]`).count()).toBe(1);
    await expect(page.locator('header .who').textContent()).resolves.toContain(world.merchant);
    await page.goto(`${world.url}/portal/endpoints`);
    await shoot(page, 'portal-endpoints');

    const tampered = await (
      await newPage()
    ).goto(`${world.url}/portal/enter?token=${encodeURIComponent(url.searchParams.get('token')!.replace(/.$/, 'A'))}x`);
    expect(tampered!.status()).toBe(401);
    // The link is no admin API credential.
    expect((await callAs(world.app, url.searchParams.get('token')!, 'GET', '/webhook-deliveries')).status).toBe(401);
  });
});
