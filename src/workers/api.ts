// API process: the provider ingress, the admin API, /healthz, /readyz and /metrics (Hono on Node).
import { serve } from '@hono/node-server';
import { createApp } from '../api/app.js';
import { createDatabase } from '../db/client.js';
import { createKafkaAdmin } from '../kafka/kafkajs.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { onShutdown } from '../lib/shutdown.js';
import { connectTemporal, pingTemporal } from '../lib/temporal.js';
import { TASK_QUEUES } from '../shared/task-queues.js';

const { env, profile } = loadSettings();
const logger = createLogger('api', env.LOG_LEVEL);
const database = createDatabase(env.DATABASE_URL, { max: env.DATABASE_POOL_MAX });
const temporal = await connectTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE);
const kafka = createKafkaAdmin({ brokers: env.KAFKA_BROKERS, clientId: 'apipay-api' });

const app = createApp({
  db: database.db,
  temporal: temporal.client,
  profile,
  env,
  taskQueues: TASK_QUEUES,
  logger,
  readiness: {
    postgresql: () => database.sql`select 1`,
    temporal: () => pingTemporal(temporal.client),
    kafka: () => kafka.ping(),
  },
});

const server = serve({ fetch: app.fetch, hostname: env.API_HOST, port: env.API_PORT }, (info) =>
  logger.info({ url: `http://${env.API_HOST}:${info.port}` }, 'api listening'),
);

onShutdown(logger, [
  () => new Promise((resolve) => server.close(resolve)),
  () => kafka.close(),
  () => temporal.connection.close(),
  () => database.close(),
]);
