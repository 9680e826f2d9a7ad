// C12, C13 (issue 20's "done when"): after `npm start` has run a while, opens the console's page of the demo's failing
// endpoint (/always-503), the backlog and the portal's home in Chromium, says what each shows (the endpoint's red 5xx
// series, the portal's red strip, the RETRYING series draining) and saves them as docs/img/demo-*.png.
// Usage: npm run demo:pictures (the stack and `npm start` running; ADMIN_TOKEN from .data/dev.env).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';

const API = process.env.APIPAY_API_URL ?? `http://127.0.0.1:${process.env.API_PORT ?? 3000}`;
const DATA = process.env.APIPAY_DATA ?? join(process.cwd(), '.data');
const OUT = process.env.DEMO_PICTURES_DIR ?? join(process.cwd(), 'docs/img');
const RED = '#d12c2c';
const token =
  process.env.ADMIN_TOKEN ?? /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync(join(DATA, 'dev.env'), 'utf8'))?.[1]?.replace(/^"|"$/g, '');
if (!token) throw new Error(`no ADMIN_TOKEN: set it or start the demo (npm start) so ${DATA}/dev.env has it`);

async function rows(page: Page, chart: string): Promise<string[][]> {
  return page
    .locator(`table[data-chart-table="${chart}"] tbody tr`)
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
const failures: string[] = [];
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${API}/console/sign-in`);
  await page.fill('input[name=token]', token);
  await page.click('button[type=submit]');
  await page.waitForURL((u) => !u.pathname.endsWith('/sign-in'));

  await page.goto(`${API}/console/endpoints`);
  const href = await page.locator('a[href*="/console/endpoints/we_"]').evaluateAll((as) => {
    const a = as.find((x) => (x.closest('tr')?.textContent ?? '').includes('always-503'));
    return a?.getAttribute('href') ?? null;
  });
  if (!href) throw new Error('no endpoint row mentions /always-503 on /console/endpoints');
  await page.goto(new URL(href, API).toString());
  const red = await page.locator(`figure[data-chart="attempts"] svg.chart rect[fill="${RED}"]`).count();
  const fiveXx = (await rows(page, 'attempts')).reduce((n, r) => n + Number(r[3] ?? 0), 0);
  console.log(`endpoint /always-503: ${red} red 5xx bars, ${fiveXx} 5xx answers in the last hour`);
  if (red === 0) failures.push('the /always-503 endpoint page shows no red series');
  await page.screenshot({ path: join(OUT, 'demo-endpoint-always-503.png'), fullPage: true });

  await page.goto(`${API}/console/backlog`);
  const retrying = (await rows(page, 'outbound-backlog')).map((r) => r[2] ?? '').filter((v) => v !== '' && v !== '–');
  console.log(`backlog: RETRYING per bucket (oldest first): ${retrying.join(' ')}`);
  await page.screenshot({ path: join(OUT, 'demo-backlog.png'), fullPage: true });

  // The portal, as the demo merchant, by a link the admin API mints (A15), signed in by the form's POST (A16).
  const link = await fetch(`${API}/admin/v1/portal-links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ merchant_account: 'acct_demo_shop', ttl: '10m' }),
  });
  if (link.status !== 201) throw new Error(`portal link: HTTP ${link.status} ${await link.text()}`);
  const url = new URL(((await link.json()) as { url: string }).url);
  const portal = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await portal.goto(`${API}${url.pathname}${url.search}`);
  await portal.click('button[type=submit]');
  await portal.waitForURL((u) => !u.pathname.endsWith('/enter'));
  await portal.goto(`${API}/portal`);
  const strips = await portal.locator(`svg rect[fill="${RED}"]`).count();
  console.log(`portal home: ${strips} red marks`);
  if (strips === 0) failures.push("the portal's home shows no red mark");
  await portal.screenshot({ path: join(OUT, 'demo-portal-home.png'), fullPage: true });
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(failures.join('\n'));
  process.exit(1);
}
console.log(`saved ${OUT}/demo-{endpoint-always-503,backlog,portal-home}.png`);
