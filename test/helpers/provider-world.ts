// The whole inbound path for ledger tests: the provider sandbox sends signed webhooks to our real API app (ingress,
// receipts, starter) over HTTP; a reconciliation worker on the test's own task queue queries the sandbox back.
// Real PostgreSQL and Temporal; the sandbox is the only stand-in (for the provider).
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { eq, inArray } from 'drizzle-orm';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { reconciliations } from '../../src/db/schema/index.js';
import { settledAmount } from '../../src/ledger/store.js';
import { sandboxProvidersFromProfile, startProviderSandbox, type ProviderSandbox } from '../../src/sandbox/provider.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { testApp } from './app.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from './env.js';
import { inboundTestProfile } from './inbound.js';
import { waitFor } from './reconciliation.js';
import { connectDevServer, startWorkers, testLogger, uniqueTaskQueues } from './temporal.js';

export interface ProviderWorld {
  db: Database['db'];
  temporal: Awaited<ReturnType<typeof connectDevServer>>;
  sandbox: ProviderSandbox;
  /** Provider names at the ingress (unique to this world). */
  stripe: string;
  hmac: string;
  /** The projection row of one event's reconciliation once it exists. */
  reconciliation(provider: string, eventId: string): Promise<typeof reconciliations.$inferSelect | undefined>;
  /** Waits until the event's reconciliation has left received/reconciling; returns its row. */
  settled(provider: string, eventId: string, timeoutMs?: number): Promise<typeof reconciliations.$inferSelect>;
  settledAmount(provider: string, reference: string, currency?: string): Promise<bigint>;
  close(): Promise<void>;
}

export async function startProviderWorld(label: string, inbound: Record<string, unknown> = {}): Promise<ProviderWorld> {
  const { profile, stripe, hmac } = inboundTestProfile(label, { inbound });
  const database = createDatabase(TEST_DATABASE_URL, { max: 8 });
  const temporal = await connectDevServer();
  const taskQueues = uniqueTaskQueues(label);
  // The API app first (the sandbox needs its URL), then the sandbox, then the profile pointing at the sandbox.
  const app = testApp({ db: database.db, temporal: temporal.client, profile, taskQueues });
  const api: ServerType = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise((r) => api.once('listening', r));
  const ingressUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const sandbox = await startProviderSandbox({ port: 0, ingressUrl, providers: sandboxProvidersFromProfile(profile) });
  // The activities read api_base_url per query: point both providers at this sandbox's port.
  for (const p of Object.values(profile.inbound.providers)) p.api_base_url = `${sandbox.url}${new URL(p.api_base_url).pathname}`;
  const activities = createActivities({ db: database.db, logger: testLogger, secretsKey: TEST_SECRETS_KEY, profile });
  const workers = await startWorkers({ connection: temporal.native, taskQueues, activities });

  const reconciliation = async (provider: string, eventId: string) =>
    (await database.db.select().from(reconciliations).where(eq(reconciliations.id, reconciliationWorkflowId(provider, eventId))))[0];
  return {
    db: database.db,
    temporal,
    sandbox,
    stripe,
    hmac,
    reconciliation,
    settled: (provider, eventId, timeoutMs = 60_000) =>
      waitFor(
        async () => {
          const row = await reconciliation(provider, eventId);
          return row && row.state !== 'received' && row.state !== 'reconciling' ? row : undefined;
        },
        timeoutMs,
        `reconciliation of ${eventId} to settle`,
      ),
    settledAmount: (provider, reference, currency = 'EUR') => settledAmount(database.db, provider, reference, currency),
    async close() {
      // Reconciliations parked for an operator would wait forever on this private queue: end them.
      const open = await database.db.select({ id: reconciliations.id }).from(reconciliations).where(inArray(reconciliations.provider, [stripe, hmac]));
      await Promise.all(open.map((r) => temporal.client.workflow.getHandle(r.id).terminate('test done').catch(() => {})));
      await workers.stop();
      await sandbox.close();
      await new Promise((r) => api.close(r));
      await temporal.close();
      await database.close();
    },
  };
}
