// API process: the provider ingress, the admin API, /healthz, /readyz and /metrics (Hono on Node).
import type { Server } from 'node:net';
import { serve } from '@hono/node-server';
import { createApp } from '../api/app.js';
import { createDatabase } from '../db/client.js';
import { createKafkaAdmin } from '../kafka/kafkajs.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { onShutdown } from '../lib/shutdown.js';
import { checkDatabase, listening, reach } from '../lib/startup.js';
import { connectTemporal, pingTemporal } from '../lib/temporal.js';
import { TASK_QUEUES } from '../shared/task-queues.js';

const PROCESS = 'api';
const { env, profile } = loadSettings(PROCESS);
const logger = createLogger(PROCESS, env.LOG_LEVEL);
const database = createDatabase(env.DATABASE_URL, { max: env.DATABASE_POOL_MAX });
await checkDatabase(PROCESS, env.DATABASE_URL, () => database.sql`select 1`);
const temporal = await reach(PROCESS, { name: 'Temporal', at: env.TEMPORAL_ADDRESS, variable: 'TEMPORAL_ADDRESS' }, () =>
  connectTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE),
);
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
await listening(PROCESS, server as Server, 'API_PORT', env.API_PORT); // R9: EADDRINUSE is one line

onShutdown(logger, [
  () => new Promise((resolve) => server.close(resolve)),
  () => kafka.close(),
  () => temporal.connection.close(),
  () => database.close(),
]);
