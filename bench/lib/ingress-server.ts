// The ingress under benchmark, as its own process (so the load generator does not share its event loop):
// the real createApp on PostgreSQL, with the group-commit writer (MODE=group) or one transaction per request
// (MODE=naive), or the batch statement issued once per request (MODE=statement); GET /bench/process-stats[?reset]
// answers its event-loop delay and GC (P8). Workflow starts are left to the sweep (no starter), so the figures are the ack path alone.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { parse } from 'yaml';
import { createApp } from '../../src/api/app.js';
import { parseProfile } from '../../src/config/profile.js';
import { createDatabase } from '../../src/db/client.js';
import { createDirectWriter, createGroupCommitWriter, createSingleStatementWriter } from '../../src/inbound/receipt-writer.js';
import { createLogger } from '../../src/lib/logger.js';
import { TASK_QUEUES } from '../../src/shared/task-queues.js';

import { BENCH_PROVIDER, BENCH_SECRET } from './ingress-bench.js';
import { recordProcessStats } from './process-stats.js';

const mode = (['naive', 'statement'].includes(process.env.MODE ?? '') ? process.env.MODE : 'group') as 'group' | 'naive' | 'statement';
process.env.BENCH_STRIPE_WEBHOOK_SECRET = BENCH_SECRET;
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'unused';
const document = parse(readFileSync(new URL('../../config/example.yaml', import.meta.url), 'utf8')) as { inbound: { providers: Record<string, unknown> } };
document.inbound.providers[BENCH_PROVIDER] = { scheme: 'stripe', secret_ref: 'env:BENCH_STRIPE_WEBHOOK_SECRET', tolerance_seconds: 300, api_base_url: 'http://127.0.0.1:4100/stripe',
  // The benchmark measures the ack path, not the A7 limiter.
  rate_limit: { per_second: 1_000_000, burst: 1_000_000 } };
const profile = parseProfile(document, 'bench profile');

const database = createDatabase(process.env.BENCH_DATABASE_URL!, { max: Number(process.env.POOL_MAX ?? 20) });
const db = database.db;
const writer =
  mode === 'group'
    ? createGroupCommitWriter({ db, maxInFlight: Number(process.env.BENCH_MAX_IN_FLIGHT ?? 8) })
    : mode === 'statement' ? createSingleStatementWriter({ db }) : createDirectWriter({ db });
const app = createApp({
  db,
  temporal: new Client({ connection: Connection.lazy({ address: '127.0.0.1:7233' }) }),
  profile,
  env: { ADMIN_TOKEN: 'bench-admin-token-0123456789', SECRETS_ENCRYPTION_KEY: Buffer.alloc(32).toString('base64') },
  taskQueues: TASK_QUEUES,
  logger: createLogger('bench-ingress', 'warn'),
  readiness: {},
  ingress: { writer, starter: null },
});
app.get('/bench/stats', (c) => c.json(writer.stats));
// P8: this process's event-loop delay and GC since the last ?reset (bench/lib/process-stats.ts).
const processStats = recordProcessStats(`ingress (${mode})`);
app.get('/bench/process-stats', (c) => {
  const snapshot = processStats.snapshot();
  if (c.req.query('reset') !== undefined) processStats.reset();
  return c.json(snapshot);
});

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
server.once('listening', () => console.log(JSON.stringify({ ready: (server.address() as AddressInfo).port, mode })));
process.once('SIGTERM', () => {
  server.close();
  void database.close().then(() => process.exit(0));
});
