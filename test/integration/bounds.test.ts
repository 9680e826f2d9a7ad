// A18 on the real PostgreSQL: what one credential can make the API process hold is bounded (issue 23: one merchant
// key could post a huge JSON array to the process that also serves the ingress; SSE streams per key were unbounded,
// each polling the database every 250 ms; /metrics listed every endpoint id on the public listener).
import { randomUUID } from 'node:crypto';
import { Gauge } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';
import type { Database } from '../../src/db/client.js';
import { registry, renderMetrics } from '../../src/metrics/registry.js';
import { callAs, createKey } from '../helpers/access.js';
import { testApp } from '../helpers/app.js';
import { TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../helpers/env.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
const temporal = lazyTemporal();

const world = useWorld({ label: 'bounds' });
beforeAll(() => {
  database = world.database;
});

describe('A18 body limits on the admin API', () => {
  it('A18 issue 23: a merchant key posting a 2 MiB JSON array is refused with 413 before the body is parsed', async () => {
    const app = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('bounds-body') });
    const account = uniqueMerchant('bounds');
    const merchant = await createKey(app, 'merchant', account);
    const huge = JSON.stringify(Array.from({ length: 300_000 }, (_, i) => `x${i}`)); // ~2.3 MiB
    const res = await callAs(app, merchant.token, 'POST', '/events/trigger', JSON.parse(huge));
    expect(res.status, res.text.slice(0, 200)).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');
    // A body under the limit is read and judged as before.
    expect(
      (await callAs(app, merchant.token, 'POST', '/events/trigger', { type: 'no.sample', merchant_account: account })).status,
    ).toBe(400);
  });

  it('A18 the limit is the profile’s admin.max_body_bytes, on every route', async () => {
    const app = testApp({
      db: database.db,
      temporal,
      taskQueues: uniqueTaskQueues('bounds-body2'),
      profile: testProfile({ admin: { max_body_bytes: 2048 } }),
    });
    const res = await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', { name: 'n'.repeat(3000), role: 'admin' });
    expect(res.status).toBe(413);
    // A12: the bootstrap token creates admins only; a small body of that kind is accepted.
    const small = { name: `small-${randomUUID().slice(0, 8)}`, role: 'admin', person: `bounds-${randomUUID().slice(0, 8)}` };
    expect((await callAs(app, TEST_ADMIN_TOKEN, 'POST', '/api-keys', small)).status).toBe(201);
  });
});

describe('A18 event streams are capped', () => {
  it('A18 a key past its open streams gets 429, the process past its own 503; a closed stream frees its place', async () => {
    const app = testApp({
      db: database.db,
      temporal,
      taskQueues: uniqueTaskQueues('bounds-sse'),
      profile: testProfile({ admin: { max_streams_per_key: 1, max_streams: 2 } }),
    });
    const keys = await Promise.all(['a', 'b', 'c'].map((n) => createKey(app, 'merchant', uniqueMerchant(`sse-${n}`))));
    const open = async (token: string) => {
      const res = await app.request('/admin/v1/events/stream?max_seconds=2', { headers: { authorization: `Bearer ${token}` } });
      if (res.status === 200) {
        const reader = res.body!.getReader();
        expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: ready');
        return {
          status: 200,
          drain: async () => {
            while (!(await reader.read()).done);
          },
        };
      }
      return { status: res.status, drain: async () => undefined };
    };
    const first = await open(keys[0]!.token);
    expect(first.status).toBe(200);
    expect((await open(keys[0]!.token)).status).toBe(429);
    const second = await open(keys[1]!.token);
    expect(second.status).toBe(200);
    expect((await open(keys[2]!.token)).status).toBe(503);
    await first.drain(); // the server ends it after max_seconds
    await second.drain();
    const again = await open(keys[0]!.token);
    expect(again.status).toBe(200);
    await again.drain();
  });
});

describe('A18 /metrics off the public listener', () => {
  it('A18 the API process serves no public /metrics unless API_METRICS_PUBLIC=true', () => {
    const base = {
      DATABASE_URL: 'postgres://x@127.0.0.1/x',
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRETS_ENCRYPTION_KEY: TEST_SECRETS_KEY.toString('base64'),
    };
    expect(parseEnv(base).API_METRICS_PUBLIC).toBe(false);
    expect(parseEnv({ ...base, API_METRICS_PUBLIC: 'true' }).API_METRICS_PUBLIC).toBe(true);
  });

  it('A18 a public /metrics, when asked for, carries no per-endpoint series; the private rendering does', async () => {
    const gauge = new Gauge({
      name: 'apipay_test_bounds_endpoint_gauge',
      help: 'test',
      labelNames: ['endpoint_id'],
      registers: [registry],
    });
    gauge.set({ endpoint_id: 'we_bounds_visible_only_privately' }, 1);
    try {
      const off = testApp({
        db: database.db,
        temporal,
        taskQueues: uniqueTaskQueues('bounds-m0'),
        metricsOnPublicListener: false,
      });
      expect((await off.request('/metrics')).status).toBe(404);
      const on = testApp({ db: database.db, temporal, taskQueues: uniqueTaskQueues('bounds-m1'), metricsOnPublicListener: true });
      const text = await (await on.request('/metrics')).text();
      expect(text).toContain('apipay_inbound_webhooks_acknowledged_total');
      expect(text).not.toContain('we_bounds_visible_only_privately');
      expect((await renderMetrics()).body).toContain('we_bounds_visible_only_privately');
    } finally {
      registry.removeSingleMetric('apipay_test_bounds_endpoint_gauge');
    }
  });
});
