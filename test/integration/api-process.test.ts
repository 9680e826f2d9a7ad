// R5/R6 the real API process (src/workers/api.ts) with Temporal and Kafka unreachable (addresses nobody listens
// on): it starts, /readyz is 200 (it needs PostgreSQL only), signed webhooks are acknowledged and stored and their
// workflow starts are left to the sweep; with API_METRICS_PORT the public listener answers 404 on /metrics.
import { type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { TEST_ADMIN_TOKEN, TEST_DATABASE_URL } from '../helpers/env.js';
import { storedFor, stripeEvent, stripeRequest } from '../helpers/inbound.js';
import { startApiProcess, stopChild } from '../helpers/processes.js';

const provider = `api-proc-${randomUUID().slice(0, 6)}`;
let database: Database;
let child: ChildProcess;
let publicUrl: string;
let privateUrl: string;
/** The child's last output lines (stdout and stderr): what a failed exit assertion shows. */
let output: string[] = [];
const lastLines = () => `the API process's last lines:\n${output.slice(-40).join('\n')}`;

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
  const api = await startApiProcess({
    provider,
    env: { API_METRICS_PORT: '0' },
    listening: ['api listening', 'api metrics listening'],
  });
  ({ child, output } = api);
  publicUrl = api.urls['api listening']!;
  privateUrl = api.urls['api metrics listening']!;
}, 90_000);

afterAll(async () => {
  await stopChild(child);
  await database?.close();
});

describe('R5 the API process depends on PostgreSQL only', () => {
  it('R5 with Temporal and Kafka unreachable it started, /readyz is 200 and checks PostgreSQL only', async () => {
    const ready = await fetch(`${publicUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgresql: { ok: true } } });
    expect((await fetch(`${privateUrl}/readyz`)).status).toBe(200);
  });

  it('R5 with Temporal unreachable signed webhooks are acknowledged and stored; their starts wait for the sweep', async () => {
    const events = Array.from({ length: 10 }, () => stripeEvent());
    const answers = await Promise.all(
      events.map((e) => fetch(`${publicUrl}/webhooks/${provider}`, stripeRequest(e.body) as RequestInit)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    for (const e of events) {
      const stored = await storedFor(database.db, provider, e.id);
      expect(stored).toMatchObject({ registry: 1, receipts: 1 });
      expect(stored.receipt!.workflow_started_at).toBeNull();
    }
    // The failed starts did not take the process down or its readiness.
    expect((await fetch(`${publicUrl}/readyz`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
  });
});

describe('R6 metrics on their own listener', () => {
  it('R6 with API_METRICS_PORT the public listener answers 404 on /metrics and the private one serves them', async () => {
    const pub = await fetch(`${publicUrl}/metrics`);
    expect(pub.status).toBe(404);
    expect(((await pub.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const priv = await fetch(`${privateUrl}/metrics`);
    expect(priv.status).toBe(200);
    const text = await priv.text();
    expect(text).toContain('apipay_inbound_webhooks_acknowledged_total');
    expect(text).toMatch(/apipay_reconciliation_queue_depth \d+/);
  });
});

describe('M7 shutdown with an open event stream', () => {
  it('M7 on SIGTERM an open `apipay listen` stream is cut after its grace and the process still exits 0 (not the 15 s timeout)', async () => {
    // A12: the bootstrap token creates an admin key; the admin key creates the merchant key.
    const createKey = (bearer: string, body: Record<string, unknown>) =>
      fetch(`${publicUrl}/admin/v1/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const admin = (await (await createKey(TEST_ADMIN_TOKEN, { name: `r5-admin-${randomUUID().slice(0, 8)}`, role: 'admin' })).json()) as { token: string };
    const key = await createKey(admin.token, { name: 'r5-listen', role: 'merchant', merchant_account: `acct_r5_${randomUUID().slice(0, 8)}` });
    expect(key.status).toBe(201);
    const { token } = (await key.json()) as { token: string };
    const stream = await fetch(`${publicUrl}/admin/v1/events/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: ready');

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const sent = Date.now();
    child.kill('SIGTERM');
    const ended = (async () => {
      for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return Date.now() - sent;
    })();
    expect(await exited, lastLines()).toBe(0);
    expect(Date.now() - sent, lastLines()).toBeLessThan(12_000);
    expect(await ended).toBeLessThan(12_000);
  });
});
