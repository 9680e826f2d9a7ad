// Kafka dispatcher process (O1–O5): consumes outbound events, fans out deliveries, starts their workflows; /metrics.
import { createDatabase } from '../db/client.js';
import { createOutboundBatchHandler } from '../dispatcher/outbound-handler.js';
import { runDispatcher } from '../dispatcher/run.js';
import { createBatchConsumer } from '../kafka/kafkajs.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { onShutdown } from '../lib/shutdown.js';
import { connectTemporal } from '../lib/temporal.js';
import '../metrics/outbound.js';
import { serveMetrics } from '../metrics/server.js';
import { TASK_QUEUES } from '../shared/task-queues.js';

const { env, profile } = loadSettings();
const logger = createLogger('dispatcher', env.LOG_LEVEL);
const database = createDatabase(env.DATABASE_URL, { max: env.DATABASE_POOL_MAX });
const temporal = await connectTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE);
const { topic, group } = profile.outbound.kafka;
const consumer = createBatchConsumer({ brokers: env.KAFKA_BROKERS, clientId: 'apipay-dispatcher', topic, groupId: group });
const handler = createOutboundBatchHandler({ db: database.db, temporal: temporal.client, taskQueue: TASK_QUEUES.delivery, profile, logger });
const metrics = await serveMetrics(env.DISPATCHER_METRICS_PORT);

await runDispatcher(consumer, handler);
logger.info({ topic, group, metrics: `http://127.0.0.1:${env.DISPATCHER_METRICS_PORT}/metrics` }, 'dispatcher consuming');

onShutdown(logger, [
  // Stops fetching and waits for the batch in hand: its offsets are committed only if it finished (O5).
  () => consumer.stop(),
  () => new Promise((resolve) => metrics.close(resolve)),
  () => temporal.connection.close(),
  () => database.close(),
]);
