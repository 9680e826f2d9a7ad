// A19 on the real PostgreSQL: a viewer searches only what it may read (issue 23: a viewer, who never sees event
// bodies, could probe them with payment_reference searches of the deliveries, which match any JSON string of a body).
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { insertDelivery, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'viewer-search' });
let app: ReturnType<typeof testApp>;
const callers = {} as Record<'viewer' | 'operator' | 'merchant', Caller>;
const account = uniqueMerchant('viewer-search');
const hidden = `card_4242_${randomUUID().slice(0, 8)}`; // a string that exists only inside an event body
let deliveryId: string;

beforeAll(async () => {
  app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('viewer-search') });
  callers.viewer = await createKey(app, 'viewer', undefined, 'search-viewer');
  callers.operator = await createKey(app, 'operator', undefined, 'search-operator');
  callers.merchant = await createKey(app, 'merchant', account, 'search-merchant');
  const endpoint = await insertEndpoint(world.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook' });
  ({ deliveryId } = await insertDelivery(world.db, {
    endpointId: endpoint.id,
    merchantAccount: account,
    body: Buffer.from(JSON.stringify({ card: hidden })),
    delivery: { status: 'FAILED', attemptCount: 1, failedAt: new Date() },
  }));
});

describe('A19 viewers search only what they may read', () => {
  it('A19 issue 23: a viewer’s payment_reference search of deliveries is refused (it would match inside bodies it may not read)', async () => {
    const res = await callAs(app, callers.viewer.token, 'GET', `/webhook-deliveries?payment_reference=${hidden}`);
    expect(res.status, res.text).toBe(403);
    expect(res.json.error.code).toBe('forbidden');
    expect(res.text).not.toContain(deliveryId);
    // Everything else of the list stays a viewer's.
    expect(
      (await callAs(app, callers.viewer.token, 'GET', `/webhook-deliveries?merchant_account=${account}`)).json.data.map(
        (d: { id: string }) => d.id,
      ),
    ).toContain(deliveryId);
  });

  it('A19 an operator and the account’s merchant, who read bodies, may search them', async () => {
    for (const role of ['operator', 'merchant'] as const) {
      const res = await callAs(app, callers[role].token, 'GET', `/webhook-deliveries?payment_reference=${hidden}`);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.map((d: { id: string }) => d.id)).toEqual([deliveryId]);
    }
  });

  it('A19 the console’s search does not run the body search for a viewer and says so', async () => {
    const browser = pageClient(app);
    await browser.get('/console/sign-in');
    expect((await browser.post('/console/sign-in', { token: callers.viewer.token })).status).toBe(303);
    const page = await browser.get(`/console/deliveries?payment_reference=${hidden}`);
    expect(page.text).not.toContain(deliveryId);
    expect(page.text).toContain('viewers cannot search deliveries by payment reference');
  });
});
