// Temporal worker process: runs the delivery, reconciliation and smoke task queues, with /metrics.
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { startStepResultPrune } from '../activities/step-journal.js';
import { keyringFromEnv } from '../shared/keyring.js';
import { createDatabase, databaseOptions } from '../db/client.js';
import { startInboundSweep } from '../inbound/sweep.js';
import { startRetentionSweep } from '../outbound/retention-sweep.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { onShutdown } from '../lib/shutdown.js';
import { bindPort, checkDatabase, EXIT_CONFIG, failStartup, reach } from '../lib/startup.js';
import { connectTemporal } from '../lib/temporal.js';
import { createProducer } from '../kafka/kafkajs.js';
import { ledgerAccounts } from '../outbox/envelope.js';
import { startOutboxRelay } from '../outbox/relay.js';
import { createWorkers, installWorkerRuntime, reconciliationTuning, runWorkers, workerTuning } from '../temporal-workers/build.js';
import { setGaugeRefreshInterval } from '../metrics/inbound-ledger.js';
import { serveMetrics } from '../metrics/server.js';
import { brokerConnections } from '../outbound/destinations/publish.js';
import { outboundAgents } from '../outbound/pinned-agents.js';
import { startTracing } from '../tracing/sdk.js';
import { probeQueue, slowLaneQueue, TASK_QUEUES } from '../shared/task-queues.js';
import { watchTaskQueueBacklog } from '../metrics/task-queue-backlog.js';
import { kafkaSecurity, temporalConnection } from '../config/connections.js';
import { serviceTokenFromEnv } from '../lib/temporal-token.js';
import { tokenlessCallProblem } from '../lib/temporal-authz-probe.js';

const PROCESS = 'worker';
const { env, profile } = loadSettings(PROCESS);
const tracing = startTracing(PROCESS, env); // R18: before any client; off unless OTEL_* say where to send spans
const logger = createLogger(PROCESS, env.LOG_LEVEL, undefined, env.LOG_FORMAT);
const database = createDatabase(env.DATABASE_URL, databaseOptions(env));
await checkDatabase(PROCESS, env.DATABASE_URL, () => database.sql`select 1`); // R9: one line, not a stack trace
const temporalAt = { name: 'Temporal', at: env.TEMPORAL_ADDRESS, variable: 'TEMPORAL_ADDRESS' };
installWorkerRuntime(logger);
if (profile.inbound.resolution_via_temporal === 'idp') {
  // A31: a stamped identity counts as a person only if the server stamps it; refuse to start when it cannot be so.
  const at = env.TEMPORAL_PUBLIC_ADDRESS ?? env.TEMPORAL_ADDRESS;
  const problem = await tokenlessCallProblem(at, env.TEMPORAL_NAMESPACE, temporalConnection(env));
  if (problem) failStartup(PROCESS, problem, EXIT_CONFIG); // R9: one line naming the fix
}
// A31: a Temporal frontend that authorizes IdP tokens gets the service client's token (none for start-dev).
const serviceToken = serviceTokenFromEnv(env, (message) => logger.warn(message));
const tokenAt = { name: 'the IdP token endpoint', at: env.TEMPORAL_OIDC_TOKEN_URL ?? '', variable: 'TEMPORAL_OIDC_TOKEN_URL' };
// With an apiKey the SDK turns TLS on unless told: plain gRPC stays plain unless TEMPORAL_TLS* say otherwise.
const firstToken = serviceToken ? { tls: false, apiKey: await reach(PROCESS, tokenAt, () => serviceToken.ready) } : {};
const connection = await reach(PROCESS, temporalAt, () =>
  NativeConnection.connect({ address: env.TEMPORAL_ADDRESS, ...firstToken, ...temporalConnection(env) }),
);
serviceToken?.onRefresh((token) => connection.setApiKey(token));
const activities = createActivities({
  db: database.db,
  profile,
  logger,
  secretsKey: keyringFromEnv(env),
  ...(env.APIPAY_FAULT_AFTER_STEP ? { faultAfterStep: env.APIPAY_FAULT_AFTER_STEP } : {}), // R13 test hook
});
const prune = startStepResultPrune({ db: database.db, logger }); // R13: the step journal keeps a week
const workers = await createWorkers({
  connection,
  namespace: env.TEMPORAL_NAMESPACE,
  taskQueues: TASK_QUEUES,
  activities,
  tuning: workerTuning(env), // bounded cache and slots bound memory with many parked deliveries
  reconciliationTuning: reconciliationTuning(env), // P3: more slots for reconciliations (local steps hold them)
  slowLaneActivities: env.WORKER_SLOW_LANE_ACTIVITIES, // M2: the slow lane's own slots
});
setGaugeRefreshInterval(env.METRICS_REFRESH_INTERVAL_MS);
const metrics = await bindPort(PROCESS, 'WORKER_METRICS_PORT', env.WORKER_METRICS_PORT, () =>
  serveMetrics(env.WORKER_METRICS_PORT, env.WORKER_METRICS_HOST, {
    logger, // R5: the worker needs PostgreSQL and Temporal
    readiness: { postgresql: () => database.sql`select 1`, temporal: () => connection.workflowService.getSystemInfo({}) },
  }),
);
logger.info({ taskQueues: Object.values(TASK_QUEUES), metrics: `http://127.0.0.1:${env.WORKER_METRICS_PORT}/metrics` }, 'worker running');

const running = runWorkers(workers);
// I6: starts the reconciliation of any receipt acknowledged but never started (a crash between the 200 and the start).
const temporal = await reach(PROCESS, temporalAt, () => connectTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, { ...(serviceToken ? { tls: false, apiKey: () => serviceToken.current() } : {}), ...temporalConnection(env) }));
// Issue 22: the task queues' backlog for the worker's HPA (apipay_temporal_task_queue_backlog).
const backlog = watchTaskQueueBacklog({
  temporal: temporal.client,
  namespace: env.TEMPORAL_NAMESPACE,
  taskQueues: [...new Set([...Object.values(TASK_QUEUES), slowLaneQueue(TASK_QUEUES.delivery), probeQueue(TASK_QUEUES.delivery)])],
  intervalMs: env.METRICS_REFRESH_INTERVAL_MS,
  onError: (error) => logger.warn({ err: error }, 'task queue backlog unavailable'),
});
const sweep = startInboundSweep({ db: database.db, temporal: temporal.client, profile, logger, taskQueue: TASK_QUEUES.reconciliation });
// O19: expunges event bodies older than the profile's retention, in bounded batches.
const retention = startRetentionSweep({ db: database.db, profile, logger });
// M1: publishes the outbox (ledger and endpoint events) to the outbound topic; waits out Kafka outages with backoff.
const relay = startOutboxRelay({
  db: database.db,
  logger,
  connect: () => createProducer({ brokers: env.KAFKA_BROKERS, ...kafkaSecurity(env), clientId: `apipay-outbox-relay-${process.pid}` }),
  topic: profile.outbound.kafka.topic,
  accountOf: ledgerAccounts(profile),
});
onShutdown(logger, [
  () => backlog.stop(),
  () => sweep.stop(),
  () => prune.stop(),
  () => retention.stop(),
  () => relay.stop(),
  // Worker.shutdown stops polling and lets in-flight tasks finish; run() resolves once they have.
  () => {
    // The SDK's own SIGTERM handler may have begun the shutdown already; a second call would throw.
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
    return running;
  },
  () => outboundAgents.close(), // O15: the delivery POSTs' pinned connections, once no attempt is in flight
  () => brokerConnections.close(), // M11: the broker destinations' connections, likewise
  () => new Promise((resolve) => metrics.close(resolve)),
  () => serviceToken?.stop(),
  () => connection.close(),
  () => temporal.connection.close(),
  () => database.close(),
  () => tracing.shutdown(), // R18: the last spans are flushed
]);
await running.catch((error) => {
  logger.fatal({ err: error }, 'worker failed');
  process.exit(1);
});
