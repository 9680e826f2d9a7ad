// A delivery worker in its own process for bench:outbound --worker-process, so its resident memory is its own.
// argv: <taskQueue>; env: BENCH_DATABASE_URL (default apipay_bench, as the parent), BENCH_SECRETS_KEY (base64), BENCH_MAX_CACHED, BENCH_WORKFLOW_BUNDLE. Prints "ready".
import { BENCH_DATABASE_URL } from './bench-db.js';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { loadProfile } from '../../src/config/profile.js';
import { createDatabase } from '../../src/db/client.js';
import { createLogger } from '../../src/lib/logger.js';
import { WORKFLOWS_PATH } from '../../src/lib/workers.js';
import { quietTemporalRuntime } from './baseline.js';

quietTemporalRuntime();
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const profile = loadProfile(process.env.APIPAY_PROFILE ?? 'config/example.yaml');
profile.outbound.allow_insecure_urls = true;
const database = createDatabase(BENCH_DATABASE_URL, { max: 20 });
const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const worker = await Worker.create({
  connection,
  taskQueue: process.argv[2]!,
  // A prebuilt bundle keeps webpack (and the memory it leaves behind) out of the worker process.
  ...(process.env.BENCH_WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.BENCH_WORKFLOW_BUNDLE } } : { workflowsPath: WORKFLOWS_PATH }),
  activities: createActivities({
    db: database.db,
    profile,
    logger: createLogger('bench-worker', 'warn'),
    secretsKey: Buffer.from(process.env.BENCH_SECRETS_KEY!, 'base64'),
  }),
  maxCachedWorkflows: Number(process.env.BENCH_MAX_CACHED ?? 500),
});
const running = worker.run();
console.log('ready');
await running;
await connection.close();
await database.close();
