// R6 cheap, private metrics on the real PostgreSQL: the gauges that count rows are refreshed in the background and
// cached (concurrent scrapes share one refresh, later scrapes run no query), and with a private listener the public
// one answers 404 on /metrics. R5: the private /readyz carries error text, the public one only names the dependency.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema/index.js';
import type { Db } from '../../src/db/client.js';
import { bindReconciliationGauges, setGaugeRefreshInterval } from '../../src/metrics/inbound-ledger.js';
import { registry } from '../../src/metrics/registry.js';
import { serveMetrics } from '../../src/metrics/server.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { uniqueTaskQueues } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';

// Counts the gauge query as PostgreSQL receives it: postgres.js calls `debug` once per statement sent.
let gaugeQueries = 0;
const sql = postgres(TEST_DATABASE_URL, {
  max: 4,
  onnotice: () => {},
  debug: (_connection, query) => {
    if (/from reconciliations/.test(query)) gaugeQueries += 1;
  },
});
const db = drizzle(sql, { schema }) as unknown as Db;
const temporal = new Client({ connection: Connection.lazy({ address: '127.0.0.1:1' }) });
let server: Server;
let privateUrl: string;

beforeAll(async () => {
  server = await serveMetrics(0, '127.0.0.1', { readiness: { postgresql: () => sql`select 1`, kafka: () => Promise.reject(new Error('broker 10.0.0.7:9092 refused')) } });
  privateUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await sql.end({ timeout: 5 });
});

describe('R6 gauges refreshed in the background', () => {
  it('R6 50 concurrent scrapes cause one refresh; later scrapes within the interval cause none; the timer refreshes without scrapes', async () => {
    setGaugeRefreshInterval(60_000);
    bindReconciliationGauges(db);
    gaugeQueries = 0;
    const pages = await Promise.all(Array.from({ length: 50 }, () => registry.metrics()));
    expect(gaugeQueries).toBe(1);
    const [row] = await sql<{ depth: number }[]>`select count(*) filter (where state not in ('applied', 'rejected'))::int as depth from reconciliations`;
    gaugeQueries = 0;
    for (const page of pages) expect(page).toContain(`apipay_reconciliation_queue_depth ${row!.depth}`);
    for (let i = 0; i < 20; i += 1) await registry.metrics();
    expect(gaugeQueries).toBe(0);
    // A short interval: the background timer refreshes on its own, one query per tick.
    setGaugeRefreshInterval(150);
    await waitFor(() => gaugeQueries >= 2, 10_000, 'two gauge queries', 20);
    setGaugeRefreshInterval(60_000);
  });
});

describe('R6 private listener', () => {
  it('R6 with metrics on their own listener the public one answers 404 on /metrics; the private one serves them', async () => {
    const app = testApp({ db, temporal, taskQueues: uniqueTaskQueues('metrics'), metricsOnPublicListener: false, ingress: { starter: null } });
    const pub = await app.request('/metrics');
    expect(pub.status).toBe(404);
    expect(((await pub.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const priv = await fetch(`${privateUrl}/metrics`);
    expect(priv.status).toBe(200);
    expect(await priv.text()).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`${privateUrl}/healthz`)).status).toBe(200);
    expect((await testApp({ db, temporal, taskQueues: uniqueTaskQueues('metrics'), ingress: { starter: null } }).request('/metrics')).status).toBe(200);
  });

  it('R5 /readyz: the private listener shows the error text, the public one only which dependency is down', async () => {
    const priv = await fetch(`${privateUrl}/readyz`);
    expect(priv.status).toBe(503);
    expect(await priv.json()).toEqual({
      status: 'unavailable',
      checks: { postgresql: { ok: true }, kafka: { ok: false, error: 'broker 10.0.0.7:9092 refused' } },
    });
    const app = testApp({
      db,
      temporal,
      taskQueues: uniqueTaskQueues('metrics'),
      readiness: { postgresql: () => sql`select 1`, kafka: () => Promise.reject(new Error('broker 10.0.0.7:9092 refused')) },
      ingress: { starter: null },
    });
    const pub = await app.request('/readyz');
    expect(pub.status).toBe(503);
    const text = await pub.text();
    expect(JSON.parse(text)).toEqual({ status: 'unavailable', checks: { postgresql: { ok: true }, kafka: { ok: false } } });
    expect(text).not.toContain('10.0.0.7');
  });
});
