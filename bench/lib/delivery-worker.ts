// A delivery worker in its own process for bench:outbound --worker-process, so its resident memory is its own.
// Same worker configuration as src/workers/worker.ts (createWorkers + workerTuning(env), WORKER_* from the environment).
// argv: <taskQueue>; env: BENCH_DATABASE_URL (default apipay_bench, as the parent), BENCH_SECRETS_KEY (base64),
// BENCH_WORKFLOW_BUNDLE, BENCH_PROFILE_JSON (the parent's parsed profile, e.g. bench:outage's retry schedule). Prints "ready"; on a "mem" line on stdin prints one "mem {json}" line (process memory, main-thread heap).
import { BENCH_DATABASE_URL } from './bench-db.js';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { parseEnv } from '../../src/config/env.js';
import { loadProfile, type Profile } from '../../src/config/profile.js';
import { createDatabase } from '../../src/db/client.js';
import { createLogger } from '../../src/lib/logger.js';
import { createWorkers, runWorkers, workerTuning } from '../../src/temporal-workers/build.js';
import { quietTemporalRuntime } from './baseline.js';

quietTemporalRuntime();
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const env = parseEnv({ ADMIN_TOKEN: 'bench-admin-token-unused', SECRETS_ENCRYPTION_KEY: process.env.BENCH_SECRETS_KEY, ...process.env });
const profile: Profile = process.env.BENCH_PROFILE_JSON
  ? (JSON.parse(process.env.BENCH_PROFILE_JSON) as Profile)
  : loadProfile(process.env.APIPAY_PROFILE ?? 'config/example.yaml');
profile.outbound.allow_insecure_urls = true;
const database = createDatabase(BENCH_DATABASE_URL, { max: env.DATABASE_POOL_MAX });
const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
const taskQueue = process.argv[2]!;
const workers = await createWorkers({
  connection,
  taskQueues: { delivery: taskQueue, reconciliation: taskQueue, smoke: taskQueue },
  activities: createActivities({
    db: database.db,
    profile,
    logger: createLogger('bench-worker', 'warn'),
    secretsKey: Buffer.from(process.env.BENCH_SECRETS_KEY!, 'base64'),
  }),
  // A prebuilt bundle keeps webpack (and the memory it leaves behind) out of the worker process.
  ...(process.env.BENCH_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.BENCH_WORKFLOW_BUNDLE } } : {}),
  tuning: workerTuning(env),
});
// Not a signal: the Temporal runtime treats SIGUSR2 (like SIGINT/SIGTERM) as a shutdown request.
process.stdin.setEncoding('utf8').on('data', () => {
  const m = process.memoryUsage();
  const h = getHeapStatistics();
  const mb = (n: number) => Math.round(n / 1048576);
  console.log(`mem ${JSON.stringify({ rss: mb(m.rss), heapUsed: mb(m.heapUsed), heapTotal: mb(m.heapTotal), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), heapLimit: mb(h.heap_size_limit) })}`);
  if (process.env.BENCH_HEAP_SNAPSHOT) console.log(`snapshot ${writeHeapSnapshot()}`);
});
const running = runWorkers(workers);
console.log('ready');
await running;
await connection.close();
await database.close();
