// C1/P1 on the real PostgreSQL: the console's delivery page names each attempt by what its row says. An attempt the
// batched dispatcher reserved before its POST (error_kind in_flight, succeeded false) reads IN_FLIGHT, not FAILED:
// an operator must not retry a delivery whose request may still be on its way.
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { deliveries, deliveryAttempts } from '../../src/db/schema/index.js';
import { IN_FLIGHT } from '../../src/outbound/attempt-store.js';
import { createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { insertDelivery, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { pageClient } from '../helpers/pages.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'console-attempt-status' });
let app: ReturnType<typeof testApp>;
let operator: Caller;
let deliveryId: string;

beforeAll(async () => {
  app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('console-attempt-status') });
  operator = await createKey(app, 'operator', undefined, 'attempt-status-operator');
  const account = uniqueMerchant('attempt-status');
  const endpoint = await insertEndpoint(world.db, { merchantAccount: account, url: 'http://127.0.0.1:4999/hook' });
  ({ deliveryId } = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount: account }));
  await world.db.update(deliveries).set({ status: 'RETRYING', attemptCount: 3 }).where(eq(deliveries.id, deliveryId));
  const startedAt = new Date();
  await world.db.insert(deliveryAttempts).values([
    { deliveryId, attemptNumber: 1, startedAt, responseStatus: 500, latencyMs: 12, succeeded: false, errorKind: 'server_error' },
    { deliveryId, attemptNumber: 2, startedAt, responseStatus: 200, latencyMs: 9, succeeded: true },
    // What the batched dispatcher's reservation writes before the POST (src/outbound/first-attempt-store.ts).
    { deliveryId, attemptNumber: 3, startedAt, latencyMs: 0, succeeded: false, errorKind: IN_FLIGHT },
  ]);
});

describe('C1 the delivery page names each attempt', () => {
  it('C1 an attempt reserved before its POST reads IN_FLIGHT; a failed one FAILED; a 2xx OK', async () => {
    const browser = pageClient(app);
    await browser.get('/console/sign-in');
    expect((await browser.post('/console/sign-in', { token: operator.token })).status).toBe(303);
    const page = await browser.get(`/console/deliveries/${deliveryId}`);
    expect(page.status).toBe(200);
    const result = (attempt: number) => {
      const row = new RegExp(`<tr data-attempt="${attempt}">([\\s\\S]*?)</tr>`).exec(page.text);
      expect(row, `attempt ${attempt}'s row`).not.toBeNull();
      return /class="status status-([a-z_]+)">([A-Z_]+)</.exec(row![1]!)?.slice(1);
    };
    expect(result(1)).toEqual(['failed', 'FAILED']);
    expect(result(2)).toEqual(['ok', 'OK']);
    expect(result(3)).toEqual(['in_flight', 'IN_FLIGHT']);
  });
});
