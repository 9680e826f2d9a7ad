// One app process of the batched kill drill (bench/outbound-kill-drill.ts), composed as src/workers/dispatcher.ts
// and src/workers/worker.ts compose it, on the drill's own task queue and the bench database:
//   worker <taskQueue> | dispatcher <topic> <group> <taskQueue>
// env: BENCH_DATABASE_URL, BENCH_SECRETS_KEY (base64), BENCH_PROFILE (JSON overrides of config/example.yaml's outbound),
// BENCH_WORKFLOW_BUNDLE.
// Prints "ready". Killed with SIGKILL by the drill; SIGTERM stops it cleanly.
import { readFileSync } from 'node:fs';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { parse } from 'yaml';
import { createActivities } from '../../src/activities/index.js';
import { parseProfile } from '../../src/config/profile.js';
import { createDatabase } from '../../src/db/client.js';
import { startHandoffSweep } from '../../src/dispatcher/handoff-sweep.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer } from '../../src/kafka/kafkajs.js';
import { createLogger } from '../../src/lib/logger.js';
import { createWorkers, runWorkers } from '../../src/temporal-workers/build.js';
import { quietTemporalRuntime } from './baseline.js';
import { BENCH_DATABASE_URL } from './bench-db.js';

quietTemporalRuntime();
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const base = parse(readFileSync('config/example.yaml', 'utf8')) as { outbound: Record<string, unknown> };
const overrides = JSON.parse(process.env.BENCH_PROFILE ?? '{}') as Record<string, unknown>;
const profile = parseProfile(
  { ...base, outbound: { ...base.outbound, allow_insecure_urls: true, ...overrides } },
  'drill profile',
);
const [role, ...args] = process.argv.slice(2);
const logger = createLogger(`drill-${role}`, 'warn');
const database = createDatabase(BENCH_DATABASE_URL, { max: 10 });
const secretsKey = Buffer.from(process.env.BENCH_SECRETS_KEY!, 'base64');
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const taskQueue = args[role === 'worker' ? 0 : 2]!;
// Both roles run a delivery worker (the dispatcher's makes its starts eager, as DISPATCHER_DELIVERY_WORKER does).
const workers = await createWorkers({
  connection,
  taskQueues: { delivery: taskQueue, reconciliation: taskQueue, smoke: taskQueue },
  activities: createActivities({ db: database.db, profile, logger, secretsKey }),
  // Prebuilt by the drill: a restart after a kill does not wait for webpack.
  ...(process.env.BENCH_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.BENCH_WORKFLOW_BUNDLE } } : {}),
});
const working = runWorkers(workers);
const stops: (() => Promise<unknown>)[] = [];
if (role === 'dispatcher') {
  const [topic, group] = args as [string, string];
  const temporal = new Client({ connection });
  const consumer = createBatchConsumer({
    brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    clientId: `drill-${process.pid}`,
    topic,
    groupId: group,
  });
  const start = { temporal, taskQueue, profile, eager: true };
  const handler = createOutboundBatchHandler({
    db: database.db,
    temporal,
    taskQueue,
    profile,
    logger,
    secretsKey,
    eagerStart: true,
  });
  await runDispatcher(consumer, handler);
  const { sweep_interval: intervalMs, handoff_grace: graceMs } = profile.outbound.batched;
  const sweep = startHandoffSweep({ db: database.db, logger, start, intervalMs, graceMs });
  stops.push(
    () => consumer.stop(),
    () => handler.drain(),
    () => sweep.stop(),
  );
}
console.log('ready');
process.once('SIGTERM', async () => {
  for (const stop of stops) await stop().catch(() => {});
  for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  await working.catch(() => {});
  await connection.close();
  await database.close();
  process.exit(0);
});
