// R18 in batched delivery mode (P1): the dispatcher sends first attempts itself, without a delivery workflow; the
// POST still joins the trace of the Kafka message its event came in. Tracing runs in this test's process (exporting
// to an OTLP/HTTP receiver here), the batch handler on the real PostgreSQL and Temporal dev server, and the message
// carries the `traceparent` header the outbox relay would have set.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { currentTraceparent, inSpan, SpanKind, traceIdOf } from '../../src/tracing/context.js';
import { startTracing, type Tracing } from '../../src/tracing/sdk.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { envelope, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let tracing: Tracing;
const receiver = await startReceiver();

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  tracing = startTracing('dispatcher', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SDK_DISABLED: false });
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
});
afterAll(async () => {
  await tracing?.shutdown();
  await receiver.close();
  await otlp?.close();
  await temporal?.close();
  await database?.close();
});

describe('R18 batched delivery mode keeps the trace', () => {
  it('R18 a batched first attempt POST is a child of the consume span, itself a child of the message traceparent', async () => {
    expect(tracing.enabled).toBe(true);
    const merchant = uniqueMerchant('trace-batched');
    await insertEndpoint(database.db, { merchantAccount: merchant, url: `${receiver.url}/batched`, eventTypes: ['*'] });
    const handler = createOutboundBatchHandler({
      db: database.db,
      temporal: temporal.client,
      taskQueue: uniqueTaskQueues('trace-batched').delivery,
      profile: testProfile({ outbound: { delivery_mode: 'batched' } }),
      logger: testLogger,
      secretsKey: TEST_SECRETS_KEY,
    });
    const event = envelope({ merchantAccount: merchant });
    // What the relay's producer span would have put in the message's headers.
    const upstream = await inSpan('apipay.test publish', { kind: SpanKind.PRODUCER }, async () => currentTraceparent());
    expect(upstream).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, upstreamSpanId] = upstream!.split('-');
    await handler({
      topic: 'apipay.test.trace-batched',
      partition: 0,
      lag: 0,
      messages: [
        {
          topic: 'apipay.test.trace-batched',
          partition: 0,
          offset: '0',
          key: Buffer.from(merchant),
          value: Buffer.from(JSON.stringify(event)),
          timestamp: String(Date.now()),
          headers: { traceparent: upstream! },
        },
      ],
    });
    await handler.drain();
    await waitFor(() => receiver.received.some((r) => r.path === '/batched'), 30_000, 'the batched POST');
    const [row] = await database.db.select().from(events).where(eq(events.eventPublicId, event.id));
    expect(traceIdOf(row!.traceparent)).toBe(traceId);

    await tracing.spanProcessor.forceFlush();
    const spans = await waitFor(
      () => {
        const inTrace = otlp.spans.filter((s) => s.traceId === traceId);
        return inTrace.some((s) => s.name === 'POST') ? inTrace : undefined;
      },
      15_000,
      'the POST span',
    );
    const consume = spans.find((s) => s.name === 'apipay.test.trace-batched process')!;
    expect(consume).toMatchObject({ service: 'apipay-dispatcher', parentSpanId: upstreamSpanId, kind: 5 }); // 5 = CONSUMER
    const post = spans.find((s) => s.name === 'POST')!;
    expect(post).toMatchObject({ parentSpanId: consume.spanId, kind: 3 }); // 3 = CLIENT
    expect(post.attributes['http.response.status_code']).toBe(200);
    expect(spans.some((s) => s.name.startsWith('StartWorkflow:'))).toBe(false); // batched: no workflow for a 2xx
  }, 60_000);
});
