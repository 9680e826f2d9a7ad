// A13 (issue 23, item 8's skip part) on the real PostgreSQL: skipping a delivery in its ordered endpoint's line
// writes an audit row naming the authenticated key and its person, in the skip's own transaction; a body-given
// operator other than the caller is refused (A2) and never logged as if it had acted.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries } from '../../src/db/schema/index.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { connectDevServer, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let app: ReturnType<typeof testApp>;
let operator: Caller;
let admin: Caller;

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  temporal = await connectDevServer();
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('skip-audit') });
  operator = await createKey(app, 'operator', undefined, 'skipper', `Skipper ${Date.now()}`);
  admin = await createKey(app, 'admin', undefined, 'skip-auditor');
});
afterAll(async () => {
  await temporal?.close();
  await database?.close();
});

async function orderedDelivery(): Promise<string> {
  const merchant = uniqueMerchant('a13');
  const endpoint = await insertEndpoint(database.db, { merchantAccount: merchant, url: 'https://example.com/hook' });
  const { deliveryId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: merchant });
  await database.db.update(deliveries).set({ sequence: 1, status: 'RETRYING' }).where(eq(deliveries.id, deliveryId));
  return deliveryId;
}

describe('A13 a skip is audited with the person behind it', () => {
  it('A13 the skip writes delivery.skip with the key, its person and the reason', async () => {
    const id = await orderedDelivery();
    const skipped = await callAs(app, operator.token, 'POST', `/webhook-deliveries/${id}/skip`, { reason: 'merchant asked' });
    expect(skipped.status).toBe(200);
    const audit = await callAs(app, admin.token, 'GET', `/audit-events?target_id=${id}`);
    expect(audit.json.data).toHaveLength(1);
    expect(audit.json.data[0]).toMatchObject({
      action: 'delivery.skip',
      actor: { key_id: operator.id, name: 'skipper', person: expect.stringMatching(/^Skipper /) },
      target: { type: 'webhook_delivery', id },
      after: { order_skipped_at: expect.any(String), reason: 'merchant asked' },
    });
  });

  it('A13 a body naming another operator is refused and skips nothing', async () => {
    const id = await orderedDelivery();
    const res = await callAs(app, operator.token, 'POST', `/webhook-deliveries/${id}/skip`, { operator: 'someone-else' });
    expect(res.status).toBe(403);
    const [row] = await database.db.select().from(deliveries).where(eq(deliveries.id, id));
    expect(row!.orderSkippedAt).toBeNull();
    expect((await callAs(app, admin.token, 'GET', `/audit-events?target_id=${id}`)).json.data).toEqual([]);
  });
});
