// A separate process running one outbound replica for the O14 test and the P1 kill test: `worker <taskQueue>` or
// `dispatcher <topic> <group> <taskQueue>`, against the test database and the real servers. Prints "ready".
// REPLICA_PROFILE (JSON) overrides the test profile, e.g. {"outbound":{"delivery_mode":"batched"}}; a dispatcher
// runs the hand-off sweep as src/workers/dispatcher.ts does. APIPAY_FAULT_AFTER_STEP=batchedRecord: see below (R14).
import { NativeConnection } from '@temporalio/worker';
import { createDatabase } from '../../src/db/client.js';
import { startHandoffSweep } from '../../src/dispatcher/handoff-sweep.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer } from '../../src/kafka/kafkajs.js';
import { connectTemporal } from '../../src/lib/temporal.js';
import { createWorkers, runWorkers } from '../../src/temporal-workers/build.js';
import { KAFKA_BROKERS, TEMPORAL_ADDRESS, TEST_DATABASE_URL, TEST_SECRETS_KEY, WORKFLOW_BUNDLE_PATH } from './env.js';
import { testProfile } from './profile.js';
import { testActivities, testLogger } from './temporal.js';

const [role, ...args] = process.argv.slice(2);
const database = createDatabase(TEST_DATABASE_URL, { max: 6 });
const closers: (() => Promise<unknown>)[] = [];
const profile = testProfile(JSON.parse(process.env.REPLICA_PROFILE ?? '{}') as Record<string, unknown>);

if (role === 'worker') {
  const connection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  // The production worker setup: the delivery queue and its slow lane (M2).
  const queue = args[0]!;
  const workers = await createWorkers({
    connection,
    taskQueues: { delivery: queue, reconciliation: queue, smoke: queue },
    activities: testActivities(database.db, { profile }),
    workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH },
  });
  const running = runWorkers(workers);
  closers.push(async () => {
    for (const worker of workers) worker.shutdown();
    await running;
    await connection.close();
  });
} else if (role === 'dispatcher') {
  const [topic, group, taskQueue] = args as [string, string, string];
  const temporal = await connectTemporal(TEMPORAL_ADDRESS, 'default');
  // P11: a killed replica's partitions move to the survivors after 10 s instead of the 30 s default; the kill tests
  // wait for that, and nothing in them depends on its length.
  const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: `replica-${process.pid}`, topic, groupId: group, sessionTimeoutMs: 10_000 });
  // R14: APIPAY_FAULT_AFTER_STEP=batchedRecord kills this dispatcher right after the batched first attempts of a chunk
  // are recorded, before their hand-off to workflows and before the offsets (the dangerous instant of P1).
  const fault = process.env.APIPAY_FAULT_AFTER_STEP === 'batchedRecord';
  const observe = (stage: string) => {
    if (!fault || stage !== 'record') return;
    process.stderr.write('[fault] killing the dispatcher after the batched first attempts were recorded\n');
    process.kill(process.pid, 'SIGKILL');
  };
  const deps = { db: database.db, temporal: temporal.client, taskQueue, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY, observe };
  const handler = createOutboundBatchHandler(deps);
  await runDispatcher(consumer, handler);
  const { sweep_interval: intervalMs, handoff_grace: graceMs } = profile.outbound.batched;
  const sweep = startHandoffSweep({ db: database.db, logger: testLogger, start: { ...deps, temporal: temporal.client }, intervalMs, graceMs });
  closers.push(() => consumer.stop(), () => handler.drain(), () => sweep.stop(), () => temporal.connection.close());
} else {
  throw new Error(`unknown role ${role}`);
}
console.log('ready');

process.once('SIGTERM', async () => {
  for (const close of closers) await close().catch(() => {});
  await database.close();
  process.exit(0);
});
