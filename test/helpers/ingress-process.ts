// A real API process for I6 kill tests: the ingress on the test database whose Temporal is unreachable, so a
// workflow start never completes and the test can SIGKILL the process after the 200 and before any start.
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../../src/api/app.js';
import { createDatabase } from '../../src/db/client.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL, TEST_SECRETS_KEY } from './env.js';
import { testProfile } from './profile.js';
import { testLogger } from './temporal.js';

const provider = process.env.INGRESS_PROVIDER!;
const profile = testProfile({
  inbound: { providers: { [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', tolerance_seconds: 300, api_base_url: 'http://127.0.0.1:4100/stripe' } } },
});
const database = createDatabase(TEST_DATABASE_URL, { max: 2 });
const app = createApp({
  db: database.db,
  temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:1', connectTimeout: '60s' }) }),
  profile,
  env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64') },
  taskQueues: { delivery: 'unused', reconciliation: process.env.INGRESS_TASK_QUEUE!, smoke: 'unused' },
  logger: testLogger,
  readiness: {},
});
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
server.once('listening', () => console.log(JSON.stringify({ ready: (server.address() as AddressInfo).port })));
