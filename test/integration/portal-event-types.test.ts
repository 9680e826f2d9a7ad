// M8 on the real PostgreSQL: the portal lists the event catalog with schema and example, and a merchant whose
// endpoint subscribes to a deprecated type is told so, on the Event types page and on the endpoint's page; an
// endpoint subscribed to `*` or to current types only is not.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'portal-event-types' });
let app: ReturnType<typeof testApp>;
let merchant: Caller;
let deprecated: string;
let current: string;

beforeAll(async () => {
  app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('portal-event-types') });
  const account = uniqueMerchant('catalog');
  merchant = await createKey(app, 'merchant', account, 'catalog-merchant');
  deprecated = (
    await insertEndpoint(world.db, {
      merchantAccount: account,
      url: 'http://127.0.0.1:4999/old',
      eventTypes: ['refund.created', 'payment.succeeded'],
    })
  ).id;
  current = (await insertEndpoint(world.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/new', eventTypes: ['*'] }))
    .id;
});

describe('M8 the portal shows the catalog and deprecated subscriptions', () => {
  it('M8 the Event types page lists every type with schema and example, and names the endpoint on a deprecated type', async () => {
    const browser = pageClient(app);
    await browser.get('/portal/sign-in');
    expect((await browser.post('/portal/sign-in', { token: merchant.token })).status).toBe(303);
    const page = await browser.get('/portal/event-types');
    expect(page.status).toBe(200);
    expect(page.text).toContain('id="payment.succeeded"');
    expect(page.text).toContain('&quot;currency&quot;'); // the schema and the example, escaped in <pre>
    expect(page.text).toMatch(
      new RegExp(
        `endpoints/${deprecated}">${deprecated}</a> subscribes to <code>refund.created</code>,\\s+deprecated on\\s+2027-03-31`,
      ),
    );
    expect(page.text).not.toContain(`${current}</a> subscribes`);

    const old = await browser.get(`/portal/endpoints/${deprecated}`);
    expect(old.text).toContain('Subscribes to <code>refund.created</code>');
    expect(old.text).toContain('use <code>refund.succeeded</code>');
    const everything = await browser.get(`/portal/endpoints/${current}`);
    expect(everything.status).toBe(200);
    expect(everything.text).not.toContain('deprecated-types');
  });
});
