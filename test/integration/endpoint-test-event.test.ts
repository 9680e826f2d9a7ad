// M6 on the real PostgreSQL and Temporal: POST /webhook-endpoints/{id}/test sends a signed ping now, recorded as a
// delivery with its workflow and attempts; the merchant's verifier (src/signing) accepts it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { auditEvents } from '../../src/db/schema/index.js';
import { verify } from '../../src/signing/index.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN } from '../helpers/env.js';
import { insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { expectNoMore } from '../helpers/wait.js';
import { useWorld } from '../helpers/world.js';

const merchant = uniqueMerchant('m6');
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let app: ReturnType<typeof testApp>;

// The shared workers' queues (test/helpers/world.ts) run the pings' delivery workflows.
const world = useWorld({ label: 'endpoint-test-event', workers: true });
beforeAll(async () => {
  receiver = await startReceiver((request) => ({ status: request.path === '/broken' ? 503 : 200 }));
  app = testApp({ db: world.db, temporal: world.temporal.client, taskQueues: world.taskQueues });
});
afterAll(async () => {
  await receiver?.close();
});

const postsTo = (path: string) => receiver.received.filter((r) => r.path === path);

describe('M6 test events on demand', () => {
  it('M6 an admin sends a ping: one signed POST the merchant verifier accepts, recorded as a DELIVERED delivery with its attempt', async () => {
    // Subscribed to payments only: a ping goes to the endpoint it was asked for, whatever its subscriptions.
    const endpoint = await insertEndpoint(world.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/hooks`,
      eventTypes: ['payment.succeeded'],
    });
    const res = await callAs(app, TEST_ADMIN_TOKEN, 'POST', `/webhook-endpoints/${endpoint.id}/test`);
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ object: 'test_delivery', endpoint_id: endpoint.id, type: 'ping', status: 'PENDING' });
    const deliveryId = res.json.delivery_id as string;
    expect(deliveryId).toMatch(/^whd_/);

    await waitFor(() => postsTo('/hooks').length >= 1, 30_000, 'the ping');
    const [post] = postsTo('/hooks');
    expect(() => verify(post!.body, String(post!.headers['apipay-signature']), [endpoint.secret])).not.toThrow();
    expect(JSON.parse(post!.body.toString('utf8'))).toMatchObject({
      id: res.json.event_id,
      object: 'event',
      account: merchant,
      type: 'ping',
      livemode: false,
      data: { object: { id: endpoint.id, object: 'webhook_endpoint' } },
    });
    const delivery = await waitFor(
      async () => {
        const got = await callAs(app, TEST_ADMIN_TOKEN, 'GET', `/webhook-deliveries/${deliveryId}`);
        return got.json?.status === 'DELIVERED' && got.json;
      },
      30_000,
      'the delivery DELIVERED',
    );
    expect(delivery.attempts).toEqual([expect.objectContaining({ attempt_number: 1, response_status: 200 })]);
    await expectNoMore(() => postsTo('/hooks').length, 1, 1_000, 'pings');
    // A3: the request is audited with the delivery it created.
    const audited = await world.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, 'endpoint.test'), eq(auditEvents.targetId, endpoint.id)));
    expect(audited).toHaveLength(1);
    expect(audited[0]!.after).toMatchObject({ delivery_id: deliveryId });
  }, 60_000);

  it('M6 a merchant key tests its own endpoint (202) but not another account’s (404); a disabled endpoint is 409; a failing one is retried like any delivery', async () => {
    const own = await insertEndpoint(world.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/broken`,
      eventTypes: ['*'],
    });
    const foreign = await insertEndpoint(world.db, {
      merchantAccount: uniqueMerchant('m6-other'),
      url: `${receiver.url}/foreign`,
      eventTypes: ['*'],
    });
    const disabled = await insertEndpoint(world.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/off`,
      eventTypes: ['*'],
      status: 'disabled',
    });
    const key = await createKey(app, 'merchant', merchant, `m6-${merchant}`);
    expect((await callAs(app, key.token, 'POST', `/webhook-endpoints/${foreign.id}/test`)).status).toBe(404);
    const conflict = await callAs(app, key.token, 'POST', `/webhook-endpoints/${disabled.id}/test`);
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('conflict');
    const res = await callAs(app, key.token, 'POST', `/webhook-endpoints/${own.id}/test`);
    expect(res.status, res.text).toBe(202);
    const retrying = await waitFor(
      async () => {
        const got = await callAs(app, key.token, 'GET', `/webhook-deliveries/${res.json.delivery_id}`);
        return got.json?.status === 'RETRYING' && got.json;
      },
      30_000,
      'the failed ping RETRYING',
    );
    expect(retrying.attempts).toEqual([expect.objectContaining({ attempt_number: 1, response_status: 503 })]);
    await world.temporal.client.workflow.getHandle(res.json.delivery_id).terminate('test done');
    expect(postsTo('/foreign')).toHaveLength(0);
    expect(postsTo('/off')).toHaveLength(0);
  }, 60_000);
});
