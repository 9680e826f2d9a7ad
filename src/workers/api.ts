// API process: the provider ingress, the admin API, /healthz, /readyz and /metrics (Hono on Node). R5: it needs
// PostgreSQL only (Temporal is connected lazily, the sweep starts what fails); R6, A18: /metrics on API_METRICS_PORT (and
// on the public listener only with API_METRICS_PUBLIC).
import type { Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { serve } from '@hono/node-server';
import { createApp } from '../api/app.js';
import { createDatabase, databaseOptions } from '../db/client.js';
import { createLogger } from '../lib/logger.js';
import { loadSettings } from '../lib/settings.js';
import { onShutdown } from '../lib/shutdown.js';
import { bindPort, checkDatabase, listening } from '../lib/startup.js';
import { lazyTemporal } from '../lib/temporal.js';
import { startBacklogSampler } from '../inbound/backlog-history.js';
import { lazyProducer } from '../kafka/lazy-producer.js';
import { setGaugeRefreshInterval } from '../metrics/inbound-ledger.js';
import { serveMetrics } from '../metrics/server.js';
import { startTracing } from '../tracing/sdk.js';
import { TASK_QUEUES } from '../shared/task-queues.js';
import { temporalConnection, kafkaSecurity } from '../config/connections.js';
import { serviceTokenFromEnv } from '../lib/temporal-token.js';

const PROCESS = 'api';
const { env, profile } = loadSettings(PROCESS);
const tracing = startTracing(PROCESS, env); // R18: before any client; off unless OTEL_* say where to send spans
const logger = createLogger(PROCESS, env.LOG_LEVEL, undefined, env.LOG_FORMAT);
const database = createDatabase(env.DATABASE_URL, databaseOptions(env));
await checkDatabase(PROCESS, env.DATABASE_URL, () => database.sql`select 1`); // R9: one line, not a stack trace
// A31: the service token is fetched in the background, like the lazy connection (calls fail until it arrives).
const serviceToken = serviceTokenFromEnv(env, (message) => logger.warn(message));
const temporal = lazyTemporal(env.TEMPORAL_ADDRESS, env.TEMPORAL_NAMESPACE, {
  ...(serviceToken ? { tls: false, apiKey: () => serviceToken.current() } : {}), // the SDK's TLS default with a key
  ...temporalConnection(env),
});
const producer = lazyProducer({ brokers: env.KAFKA_BROKERS, clientId: 'apipay-api', ...kafkaSecurity(env) }); // M7's trigger route only
const readiness = { postgresql: () => database.sql`select 1` };
setGaugeRefreshInterval(env.METRICS_REFRESH_INTERVAL_MS);

const app = createApp({
  db: database.db,
  temporal: temporal.client,
  profile,
  env,
  taskQueues: TASK_QUEUES,
  logger,
  readiness,
  producer,
  metricsOnPublicListener: env.API_METRICS_PUBLIC, // A18: off the public listener unless asked for
});
// C12: one sample a minute of the open queues, the history of the console's backlog and review-queue charts.
const stopSampler = startBacklogSampler(database.db, (err) => logger.warn({ err }, 'backlog sample failed (C12)'));
const metrics =
  env.API_METRICS_PORT === undefined
    ? undefined
    : await bindPort(PROCESS, 'API_METRICS_PORT', env.API_METRICS_PORT, () => serveMetrics(env.API_METRICS_PORT!, env.API_METRICS_HOST, { readiness, logger }));
if (metrics) logger.info({ url: `http://${env.API_METRICS_HOST}:${(metrics.address() as { port: number }).port}` }, 'api metrics listening');

const server = serve({ fetch: app.fetch, hostname: env.API_HOST, port: env.API_PORT }, (info) =>
  logger.info({ url: `http://${env.API_HOST}:${info.port}` }, 'api listening'),
);
await listening(PROCESS, server as Server, 'API_PORT', env.API_PORT); // R9: EADDRINUSE is one line

onShutdown(logger, [
  async () => stopSampler(),
  // Open event streams (M7) would hold the close: after a grace they are cut; `apipay listen` resumes by Last-Event-ID.
  () => new Promise((resolve) => (server.close(resolve), setTimeout(() => (server as HttpServer).closeAllConnections(), 3_000).unref())),
  () => new Promise((resolve) => (metrics ? metrics.close(resolve) : resolve(undefined))),
  // The Temporal connection is not closed: a start still retrying (Temporal unreachable, R5) would fire its retry
  // timer into the closed channel and throw out of the timer ("Channel has been shut down", exit 1); the receipts
  // it was starting are the sweep's, and the exit below closes the socket.
  () => producer.close(),
  () => database.close(),
  () => tracing.shutdown(), // R18: the last spans are flushed
]);
