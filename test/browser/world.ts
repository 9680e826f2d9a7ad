// The world the browser tests (C3) and the console screenshots run in: the real API app on a real port, real
// delivery and reconciliation workers on the Temporal dev server, a merchant receiver, the provider sandbox, and
// Chromium driven by playwright-core. Nothing is faked but the merchants and the provider (local HTTP peers).
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { eq } from 'drizzle-orm';
import { chromium, type Browser } from 'playwright-core';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { deliveries, events } from '../../src/db/schema/index.js';
import { DELIVERY_WORKFLOW } from '../../src/shared/outbound.js';
import { reconciliationStateQuery } from '../../src/shared/inbound.js';
import { createKey, type Caller } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { providerEvent, startPaymentsPeer, startReconciliation, succeeded } from '../helpers/reconciliation.js';
import { connectDevServer, startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface World {
  url: string;
  app: ReturnType<typeof testApp>;
  database: Database;
  browser: Browser;
  temporal: Awaited<ReturnType<typeof connectDevServer>>;
  taskQueues: ReturnType<typeof uniqueTaskQueues>;
  provider: string;
  merchant: string;
  otherMerchant: string;
  keys: { merchant: Caller; operator: Caller; viewer: Caller };
  /** Parks a payment whose provider amount differs from the webhook's: it waits in manual_review. */
  parked: (amountMinor: string) => Promise<{ id: string; paymentReference: string }>;
  /** A delivery that FAILED and whose workflow run has closed, to an endpoint that now answers 200. */
  failedDelivery: (merchantAccount?: string) => Promise<{ deliveryId: string; eventId: string; endpointId: string }>;
  /** An event (and its delivery) whose body holds `text` in data.object.description. */
  eventWithText: (text: string) => Promise<{ eventId: string; deliveryId: string }>;
  close: () => Promise<void>;
}

export async function startWorld(label: string): Promise<World> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install Debian's chromium (apt-get install chromium; scripts/test.sh does it as root) or set CHROMIUM_PATH`,
    );
  }
  const database = createDatabase(TEST_DATABASE_URL, { max: 6 });
  const temporal = await connectDevServer();
  const peer = await startPaymentsPeer();
  const receiver = await startReceiver(() => ({ status: 200, body: 'ok' }));
  const provider = `console-${label}-${Math.random().toString(36).slice(2, 8)}`;
  const taskQueues = uniqueTaskQueues(`console-${label}`);
  const profile = testProfile({
    inbound: {
      providers: {
        [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: peer.baseUrl },
      },
      provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
    },
  });
  const activities = createActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
  const workers = await startWorkers({ connection: temporal.native, taskQueues, activities });
  const app = testApp({ db: database.db, temporal: temporal.client, profile, taskQueues });
  const server: ServerType = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });

  const merchant = uniqueMerchant('console');
  const otherMerchant = uniqueMerchant('other');
  const keys = {
    merchant: await createKey(app, 'merchant', merchant, 'shop-portal'),
    operator: await createKey(app, 'operator', undefined, 'alice'),
    viewer: await createKey(app, 'viewer', undefined, 'victor'),
  };

  return {
    url,
    app,
    database,
    browser,
    temporal,
    taskQueues,
    provider,
    merchant,
    otherMerchant,
    keys,
    async parked(amountMinor) {
      const event = providerEvent({ amountMinor });
      peer.set(event.paymentReference, succeeded(event, { amountMinor: String(Number(amountMinor) - 100) }));
      const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event, { provider });
      await waitFor(
        async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review',
        60_000,
        'manual_review',
      );
      return { id: handle.workflowId, paymentReference: event.paymentReference };
    },
    async failedDelivery(merchantAccount = merchant) {
      const endpoint = await insertEndpoint(database.db, { merchantAccount, url: `${receiver.url}/hooks` });
      const { deliveryId, eventId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount });
      await database.db
        .update(deliveries)
        .set({ status: 'FAILED', attemptCount: 6, failedAt: new Date() })
        .where(eq(deliveries.id, deliveryId));
      // As after a full failed cycle: the workflow run has closed (its review window is over).
      const earlier = await temporal.client.workflow.start(DELIVERY_WORKFLOW, {
        workflowId: deliveryId,
        taskQueue: `${taskQueues.delivery}-unpolled`,
        args: [{ deliveryId, retryScheduleMs: [60_000] }],
      });
      await earlier.terminate('review window over (test)');
      return { deliveryId, eventId, endpointId: endpoint.id };
    },
    async eventWithText(text) {
      const endpoint = await insertEndpoint(database.db, { merchantAccount: merchant, url: `${receiver.url}/hooks` });
      const { deliveryId, eventId } = await insertDelivery(database.db, { endpointId: endpoint.id, merchantAccount: merchant });
      const [row] = await database.db.select().from(events).where(eq(events.eventPublicId, eventId));
      const body = JSON.parse(row!.body!.toString('utf8'));
      body.data.object.description = text;
      await database.db
        .update(events)
        .set({ body: Buffer.from(JSON.stringify(body)) })
        .where(eq(events.eventPublicId, eventId));
      return { eventId, deliveryId };
    },
    async close() {
      await browser.close().catch(() => {});
      await new Promise((resolve) => server.close(resolve));
      await workers.stop();
      await receiver.close();
      await peer.close();
      await temporal.close();
      await database.close();
    },
  };
}
