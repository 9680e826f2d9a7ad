// /healthz, /readyz against the real dependencies (the checks given; each process has its own, R5), the one error shape, and processes refusing a bad profile.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/api/app.js';
import type { Database } from '../../src/db/client.js';
import { createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import { pingTemporal } from '../../src/lib/temporal.js';
import { TASK_QUEUES } from '../../src/shared/task-queues.js';
import { KAFKA_BROKERS, TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import { testLogger } from '../helpers/temporal.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
const kafka = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'health-test' });
// A broker address where nothing listens: a real, unreachable dependency.
const deadKafka = createKafkaAdmin({ brokers: ['127.0.0.1:1'], clientId: 'health-test-dead' });

const world = useWorld({ label: 'health' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
});
afterAll(async () => {
  await kafka.close();
  await deadKafka.close();
});

function app(kafkaPing: () => Promise<unknown>) {
  return createApp({
    db: database.db,
    temporal: temporal.client,
    profile: testProfile(),
    env: { ADMIN_TOKEN: TEST_ADMIN_TOKEN, SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64') },
    taskQueues: TASK_QUEUES,
    logger: testLogger,
    readiness: {
      postgresql: () => database.sql`select 1`,
      temporal: () => pingTemporal(temporal.client),
      kafka: kafkaPing,
    },
  });
}

describe('health and readiness', () => {
  it('/healthz answers 200 without touching dependencies', async () => {
    const res = await app(async () => {}).request('/healthz');
    expect(res.status).toBe(200);
  });

  it('/readyz is 200 when PostgreSQL, Temporal and Kafka answer', async () => {
    const res = await app(() => kafka.ping()).request('/readyz');
    const body = await res.json();
    expect(body).toEqual({ status: 'ready', checks: { postgresql: { ok: true }, temporal: { ok: true }, kafka: { ok: true } } });
    expect(res.status).toBe(200);
  });

  it('/readyz is 503 naming the dependency that does not answer', async () => {
    const res = await app(() => deadKafka.ping()).request('/readyz');
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean }> };
    expect(res.status).toBe(503);
    expect(body.status).toBe('unavailable');
    expect(body.checks.kafka?.ok).toBe(false);
    expect(body.checks.postgresql?.ok).toBe(true);
    // R5: the public listener names the dependency, never its internal error text.
    expect(body.checks.kafka).toEqual({ ok: false });
  });

  it('/readyz re-checks its dependencies on every request instead of caching a verdict', async () => {
    let useDead = true;
    const flaky = app(() => (useDead ? deadKafka.ping() : kafka.ping()));
    expect((await flaky.request('/readyz')).status).toBe(503);
    useDead = false;
    expect((await flaky.request('/readyz')).status).toBe(200);
  });

  it('unknown routes get the one JSON error shape', async () => {
    const res = await app(async () => {}).request('/nope');
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_found');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('/metrics serves Prometheus text', async () => {
    const res = await app(async () => {}).request('/metrics');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('process_cpu_user_seconds_total');
  });
});

describe('configuration at process start', () => {
  it('the API process refuses a bad profile with a message naming the key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'apipay-profile-'));
    const bad = readFileSync('config/example.yaml', 'utf8').replace('request_timeout: 10s', 'request_timeout: ten seconds');
    writeFileSync(join(dir, 'bad.yaml'), bad);
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/workers/api.ts'], {
      env: {
        ...process.env,
        APIPAY_PROFILE: join(dir, 'bad.yaml'),
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
        SANDBOX_STRIPE_WEBHOOK_SECRET: 'x',
        SANDBOX_HMAC_WEBHOOK_SECRET: 'y',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(78);
    expect(run.stderr).toContain('outbound.request_timeout');
  });
});
