// R18 where the trace crosses a table: a receipt the ingress acknowledged but never started (the process died after
// its 200) keeps the request span's traceparent, and the sweep's start of its reconciliation joins that trace as a
// child of the request span. Tracing runs in this test's process, exporting to an OTLP/HTTP receiver here; the real
// PostgreSQL and Temporal dev server.
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { webhookReceipts } from '../../src/db/schema/index.js';
import { sweepUnstartedReceipts } from '../../src/inbound/sweep.js';
import { connectTemporal } from '../../src/lib/temporal.js';
import { createProviderRegistry } from '../../src/providers/index.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { startTracing, type Tracing } from '../../src/tracing/sdk.js';
import { testApp } from '../helpers/app.js';
import { TEMPORAL_ADDRESS, TEST_DATABASE_URL } from '../helpers/env.js';
import { inboundTestProfile, stripeEvent, stripeRequest, terminateAll } from '../helpers/inbound.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectTemporal>>;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let tracing: Tracing;
const started = new Set<string>();
const { profile, stripe } = inboundTestProfile('trsw');
const providers = createProviderRegistry({ [stripe]: profile.inbound.providers[stripe]! });
const taskQueues = uniqueTaskQueues('trace-sweep');

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  tracing = startTracing('api', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SDK_DISABLED: false });
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectTemporal(TEMPORAL_ADDRESS, 'default'); // after startTracing: with the client interceptor
});
afterAll(async () => {
  await terminateAll(temporal.client, started);
  await tracing?.shutdown();
  await otlp?.close();
  await temporal?.connection.close();
  await database?.close();
});

describe('R18 the sweep continues the trace its receipt kept', () => {
  it('R18 a reconciliation started by the sweep is a child of the ingress request that wrote the receipt', async () => {
    // The ingress as it is when the process dies right after the commit: no starter runs.
    const app = testApp({ db: database.db, temporal: temporal.client, profile, taskQueues, ingress: { starter: null } });
    const event = stripeEvent();
    expect((await app.request(`/webhooks/${stripe}`, stripeRequest(event.body))).status).toBe(200);
    started.add(reconciliationWorkflowId(stripe, event.id));
    const [receipt] = await database.db
      .select({ traceparent: webhookReceipts.traceparent })
      .from(webhookReceipts)
      .where(and(eq(webhookReceipts.provider, stripe), eq(webhookReceipts.providerEventId, event.id)));
    expect(receipt!.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, requestSpanId] = receipt!.traceparent!.split('-');

    const result = await sweepUnstartedReceipts({
      db: database.db,
      temporal: temporal.client,
      profile,
      taskQueue: taskQueues.reconciliation,
      providers,
      olderThanMs: 0,
      limit: 10,
      logger: testLogger,
    });
    expect(result.started).toBe(1);

    await tracing.spanProcessor.forceFlush();
    const spans = await waitFor(
      () => {
        const inTrace = otlp.spans.filter((s) => s.traceId === traceId);
        return inTrace.some((s) => s.name === 'StartWorkflow:reconciliationWorkflow') ? inTrace : undefined;
      },
      15_000,
      'the sweep start span',
    );
    expect(spans.find((s) => s.spanId === requestSpanId)).toMatchObject({ name: 'POST /webhooks/:provider', parentSpanId: null });
    expect(spans.find((s) => s.name === 'StartWorkflow:reconciliationWorkflow')!.parentSpanId).toBe(requestSpanId);
  }, 60_000);
});
