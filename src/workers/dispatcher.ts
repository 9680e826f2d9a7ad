// Kafka dispatcher process (O1–O5): consumes outbound events, fans out deliveries, starts their workflows; /metrics.
// By default it also runs a delivery worker on the same NativeConnection, which makes its workflow starts eager:
// the server hands the first workflow task back in the start response (docs/benchmarks.md).
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { keyringFromEnv } from '../shared/keyring.js';
import { createDatabase, databaseOptions } from '../db/client.js';
import { startHandoffSweep } from '../dispatcher/handoff-sweep.js';
import { createOutboundBatchHandler } from '../dispatcher/outbound-handler.js';
import { runDispatcher } from '../dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../kafka/kafkajs.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { onShutdown } from '../lib/shutdown.js';
import { bindPort, checkDatabase, EXIT_CONFIG, failStartup, reach } from '../lib/startup.js';
import { pingTemporal, temporalClient } from '../lib/temporal.js';
import { createWorkers, installWorkerRuntime, runWorkers, workerTuning } from '../temporal-workers/build.js';
import '../metrics/outbound.js';
import { serveMetrics } from '../metrics/server.js';
import { brokerConnections } from '../outbound/destinations/publish.js';
import { outboundAgents } from '../outbound/pinned-agents.js';
import { startTracing } from '../tracing/sdk.js';
import { TASK_QUEUES } from '../shared/task-queues.js';
import { kafkaSecurity, temporalConnection } from '../config/connections.js';
import { serviceTokenFromEnv } from '../lib/temporal-token.js';

const PROCESS = 'dispatcher';
const { env, profile } = loadSettings(PROCESS);
const tracing = startTracing(PROCESS, env); // R18: before any client; off unless OTEL_* say where to send spans
const logger = createLogger(PROCESS, env.LOG_LEVEL, undefined, env.LOG_FORMAT);
const database = createDatabase(env.DATABASE_URL, databaseOptions(env));
await checkDatabase(PROCESS, env.DATABASE_URL, () => database.sql`select 1`); // R9: one line, not a stack trace
installWorkerRuntime(logger);
const temporalAt = { name: 'Temporal', at: env.TEMPORAL_ADDRESS, variable: 'TEMPORAL_ADDRESS' };
// A31: a Temporal frontend that authorizes IdP tokens gets the service client's token (none for start-dev).
const serviceToken = serviceTokenFromEnv(env, (message) => logger.warn(message));
const tokenAt = { name: 'the IdP token endpoint', at: env.TEMPORAL_OIDC_TOKEN_URL ?? '', variable: 'TEMPORAL_OIDC_TOKEN_URL' };
// With an apiKey the SDK turns TLS on unless told: plain gRPC stays plain unless TEMPORAL_TLS* say otherwise.
const firstToken = serviceToken ? { tls: false, apiKey: await reach(PROCESS, tokenAt, () => serviceToken.ready) } : {};
const connection = await reach(PROCESS, temporalAt, () =>
  NativeConnection.connect({ address: env.TEMPORAL_ADDRESS, ...firstToken, ...temporalConnection(env) }),
);
serviceToken?.onRefresh((token) => connection.setApiKey(token));
const temporal = temporalClient(connection, env.TEMPORAL_NAMESPACE);

const delivery = TASK_QUEUES.delivery;
const secretsKey = keyringFromEnv(env);
const workers = env.DISPATCHER_DELIVERY_WORKER
  ? await createWorkers({
      connection,
      namespace: env.TEMPORAL_NAMESPACE,
      taskQueues: { delivery, reconciliation: delivery, smoke: delivery }, // the delivery queue only
      activities: createActivities({ db: database.db, profile, logger, secretsKey }),
      slowLaneActivities: env.WORKER_SLOW_LANE_ACTIVITIES,
      tuning: workerTuning(env), // the same bounded cache and slots as the worker process
    })
  : [];
const working = runWorkers(workers);

const { topic, group } = profile.outbound.kafka;
const consumer = createBatchConsumer({ brokers: env.KAFKA_BROKERS, ...kafkaSecurity(env), clientId: 'apipay-dispatcher', topic, groupId: group });
const handler = createOutboundBatchHandler({
  db: database.db,
  temporal,
  taskQueue: delivery,
  profile,
  logger,
  eagerStart: workers.length > 0,
  secretsKey, // P1: batched mode signs and sends first attempts here
});
// P1: deliveries a batched dispatcher fanned out and never handed off (kill -9) get their workflow; runs in both modes.
const sweep = startHandoffSweep({
  db: database.db,
  logger,
  start: { temporal, taskQueue: delivery, profile, eager: workers.length > 0 },
  intervalMs: profile.outbound.batched.sweep_interval,
  graceMs: profile.outbound.batched.handoff_grace,
});
const kafka = createKafkaAdmin({ brokers: env.KAFKA_BROKERS, ...kafkaSecurity(env), clientId: 'apipay-dispatcher-readiness' });
const metrics = await bindPort(PROCESS, 'DISPATCHER_METRICS_PORT', env.DISPATCHER_METRICS_PORT, () =>
  serveMetrics(env.DISPATCHER_METRICS_PORT, env.DISPATCHER_METRICS_HOST, {
    logger, // R5: the dispatcher needs Kafka, PostgreSQL and Temporal
    readiness: { postgresql: () => database.sql`select 1`, temporal: () => pingTemporal(temporal), kafka: () => kafka.ping() },
  }),
);

const kafkaAt = { name: 'Kafka', at: env.KAFKA_BROKERS.join(','), variable: 'KAFKA_BROKERS' };
// C11: a broker that answers but lacks the topic is a configuration to fix, not an unreachable Kafka.
if (!(await reach(PROCESS, kafkaAt, () => kafka.hasTopic(topic)))) {
  failStartup(PROCESS, `topic ${topic} does not exist on Kafka at ${kafkaAt.at} (profile outbound.kafka.topic); fix: create it (scripts/stack.sh up creates the stack's) or correct outbound.kafka.topic`, EXIT_CONFIG);
}
await reach(PROCESS, kafkaAt, () => runDispatcher(consumer, handler));
logger.info(
  { topic, group, deliveryMode: profile.outbound.delivery_mode, deliveryWorker: workers.length > 0, metrics: `http://127.0.0.1:${env.DISPATCHER_METRICS_PORT}/metrics` },
  'dispatcher consuming',
);

onShutdown(logger, [
  // Stops fetching and waits for the batch in hand: its offsets are committed only if it finished (O5).
  () => consumer.stop(),
  () => handler.drain(), // P2: batched first attempts still in hand behind the committed offsets
  () => sweep.stop(),
  () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    return working;
  },
  () => outboundAgents.close(), // O15: the delivery POSTs' pinned connections, once no attempt is in flight
  () => brokerConnections.close(), // M11: the broker destinations' connections, likewise
  () => new Promise((resolve) => metrics.close(resolve)),
  () => kafka.close(),
  () => serviceToken?.stop(),
  () => connection.close(),
  () => database.close(),
  () => tracing.shutdown(), // R18: the last spans are flushed
]);
await working.catch((error) => {
  logger.fatal({ err: error }, 'delivery worker failed');
  process.exit(1);
});
