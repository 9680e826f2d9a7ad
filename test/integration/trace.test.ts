// R18: one trace per payment, across the three real processes (src/workers/api.ts, worker.ts, dispatcher.ts, run as
// `npm start` runs them) on the real PostgreSQL, Temporal and Kafka, exporting to an OTLP/HTTP receiver in this test.
// A signed webhook from the provider sandbox ends as the merchant's POST of its payment.settled event, and one trace
// id covers the ingress request, the reconciliation workflow and its activities, the provider query, the ledger
// posting, the outbox relay's Kafka message, the dispatcher's consume, the delivery workflow and the POST; every
// span's parent is a span of that trace, and only the ingress request has none.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNamespace, startApp, type AppName, type StartedApp } from '../../bench/lib/app-start.js';
import { Connection } from '@temporalio/client';
import { createDatabase, type Database } from '../../src/db/client.js';
import { events, reconciliations, webhookReceipts } from '../../src/db/schema/index.js';
import { createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import { ledgerEventId } from '../../src/ledger/announce.js';
import { sandboxProvidersFromProfile, startProviderSandbox, type ProviderSandbox } from '../../src/sandbox/provider.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { SA } from '../../src/shared/search-attributes.js';
import { traceIdOf } from '../../src/tracing/context.js';
import { KAFKA_BROKERS, TEMPORAL_ADDRESS } from '../helpers/env.js';
import { insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { appProcessEnv, privateDatabase } from '../helpers/private-database.js';
import { testProfile } from '../helpers/profile.js';
import { freePort } from '../helpers/capture.js';

// P11: a database of its own, so that the worker process's receipts sweep and outbox relay see only this file's rows
// and the file runs beside the others rather than in the serial tier.
const store = privateDatabase('trace');
const NAMESPACE = 'apipay-trace-test'; // the processes poll the real task-queue names: a namespace of their own
const suffix = randomUUID().slice(0, 6);
const provider = `trace-stripe-${suffix}`;
const merchant = uniqueMerchant('trace');
const topic = `apipay.test.trace.${suffix}`;
const kafka = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'trace-test' });
const apps: Partial<Record<AppName, StartedApp>> = {};
let database: Database;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let sandbox: ProviderSandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

/** The dev server's new namespace needs the search attributes the starts set (the stack registers them for default). */
async function registerSearchAttributes(): Promise<void> {
  const connection = await Connection.connect({ address: TEMPORAL_ADDRESS });
  try {
    await connection.operatorService
      .addSearchAttributes({
        namespace: NAMESPACE,
        searchAttributes: Object.fromEntries(Object.values(SA).map((key) => [key.name, 2])),
      }) // 2 = KEYWORD
      .catch((error: { code?: number }) => {
        if (error.code !== 6) throw error; // ALREADY_EXISTS: an earlier run registered them
      });
  } finally {
    await connection.close();
  }
}

beforeAll(async () => {
  await store.create({ migrate: true });
  database = createDatabase(store.ownerUrl, { max: 2 });
  otlp = await startOtlpReceiver();
  receiver = await startReceiver();
  await kafka.createTopic(topic, 1);
  await ensureNamespace(TEMPORAL_ADDRESS, NAMESPACE);
  await registerSearchAttributes();
  const ports = { api: await freePort(), worker: await freePort(), dispatcher: await freePort() };

  const providerEntry = {
    scheme: 'stripe',
    secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET',
    tolerance_seconds: 300,
    api_base_url: 'http://127.0.0.1:4100/stripe',
    merchant_account: merchant,
  };
  sandbox = await startProviderSandbox({
    port: 0,
    ingressUrl: `http://127.0.0.1:${ports.api}`,
    providers: sandboxProvidersFromProfile(testProfile({ inbound: { providers: { [provider]: providerEntry } } })),
  });
  const profile = parse(readFileSync('config/example.yaml', 'utf8')) as Record<string, Record<string, unknown>>;
  profile.inbound!.providers = { [provider]: { ...providerEntry, api_base_url: `${sandbox.url}/stripe` } };
  profile.inbound!.provider_query_backoff = { initial: '200ms', multiplier: 2, maximum: '1s' };
  profile.outbound!.kafka = { topic, group: `trace-${suffix}` };
  profile.outbound!.allow_insecure_urls = true;
  const profilePath = join(mkdtempSync(join(tmpdir(), 'apipay-trace-')), 'profile.yaml');
  writeFileSync(profilePath, stringify(profile));

  const env: Record<string, string> = {
    PATH: process.env.PATH!,
    HOME: process.env.HOME!,
    ...appProcessEnv(store, NAMESPACE),
    NODE_ENV: 'test',
    APIPAY_PROFILE: profilePath,
    API_PORT: String(ports.api),
    WORKER_METRICS_PORT: String(ports.worker),
    DISPATCHER_METRICS_PORT: String(ports.dispatcher),
    // R18: the standard variable; each process names itself apipay-<process>.
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  };
  await Promise.all(
    (['api', 'worker', 'dispatcher'] as const).map(async (app) => {
      apps[app] = await startApp({
        command: process.execPath,
        args: ['--import', 'tsx', `src/workers/${app}.ts`],
        cwd: process.cwd(),
        env,
        port: ports[app],
        timeoutMs: 150_000,
      });
    }),
  );
}, 240_000);

afterAll(async () => {
  await Promise.all(Object.values(apps).map((app) => app?.stop()));
  await sandbox?.close();
  await receiver?.close();
  await otlp?.close();
  await kafka.close();
  await database?.close();
  await store.drop();
}, 60_000);

/** Every ancestor of `span` within `spans`, nearest first. */
function ancestors(span: ReceivedSpan, byId: Map<string, ReceivedSpan>): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (
    let at = span.parentSpanId && byId.get(span.parentSpanId);
    at;
    at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined
  )
    chain.push(at);
  return chain;
}

describe('R18 one trace per payment', () => {
  it('R18 a signed provider webhook and the merchant POST of its payment.settled are one trace across api, worker and dispatcher', async () => {
    const reference = `pi_trace_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const endpoint = await insertEndpoint(database.db, {
      merchantAccount: merchant,
      url: `${receiver.url}/hooks`,
      eventTypes: ['payment.settled'],
    });
    expect(endpoint.id).toMatch(/^we_/);
    sandbox.upsertPayment(provider, reference, { status: 'succeeded', amountMinor: 2500, currency: 'EUR' });
    const sent = await sandbox.sendWebhook(provider, { type: 'payment.succeeded', reference });
    expect(sent.deliveries.map((d) => d.status)).toEqual([200]);

    const reconciliationId = reconciliationWorkflowId(provider, sent.eventId);
    const settled = await waitFor(
      async () => {
        const [row] = await database.db.select().from(reconciliations).where(eq(reconciliations.id, reconciliationId));
        return row?.state === 'applied' ? row : undefined;
      },
      90_000,
      'the reconciliation applied',
    );
    const eventId = ledgerEventId(settled.ledgerTransactionId!);
    const posts = () =>
      receiver.received.filter(
        (r) => r.path === '/hooks' && (JSON.parse(r.body.toString('utf8')) as { id: string }).id === eventId,
      );
    await waitFor(() => posts().length >= 1, 90_000, 'the merchant POST of payment.settled');
    expect(JSON.parse(posts()[0]!.body.toString('utf8'))).toMatchObject({
      id: eventId,
      type: 'payment.settled',
      account: merchant,
    });
    // Our trace context stays inside: the merchant is not sent a traceparent.
    expect(posts()[0]!.headers.traceparent).toBeUndefined();

    // The trace the rows kept: the receipt's (the ingress request) and the event's (its deliveries) are one trace.
    const [receipt] = await database.db.select().from(webhookReceipts).where(eq(webhookReceipts.providerEventId, sent.eventId));
    const [event] = await database.db.select().from(events).where(eq(events.eventPublicId, eventId));
    const traceId = traceIdOf(receipt!.traceparent);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceIdOf(event!.traceparent)).toBe(traceId);

    // The spans: exported in batches of 500 ms; wait until the last one (the merchant POST) has come in.
    const inTrace = () => otlp.spans.filter((s) => s.traceId === traceId);
    const post = await waitFor(
      () => inTrace().find((s) => s.name === 'POST' && s.attributes['http.response.status_code'] === 200),
      30_000,
      'the POST span',
    );
    await new Promise((r) => setTimeout(r, 1_500)); // the spans that end after the POST's (its workflow's, its activity's)
    const spans = inTrace();
    if (process.env.TRACE_DUMP)
      writeFileSync(
        process.env.TRACE_DUMP,
        JSON.stringify(
          spans.map((s) => [s.service, s.name, s.spanId, s.parentSpanId]),
          null,
          1,
        ),
      );
    const names = (service: string) => spans.filter((s) => s.service === service).map((s) => s.name);

    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['apipay-api', 'apipay-worker', 'apipay-dispatcher']));
    // api: the ingress request (the root) and the reconciliation's start.
    const root = spans.find((s) => s.name === 'POST /webhooks/:provider')!;
    expect(root).toMatchObject({ service: 'apipay-api', parentSpanId: null, kind: 2 }); // 2 = SERVER
    expect(root.attributes['http.response.status_code']).toBe(200);
    expect(spans.filter((s) => s.parentSpanId === null)).toEqual([root]);
    expect(names('apipay-api')).toEqual(expect.arrayContaining(['StartWorkflow:reconciliationWorkflow']));
    // worker: the workflow, its activities (local ones too), the provider query, the ledger posting, the relay's message.
    expect(names('apipay-worker')).toEqual(
      expect.arrayContaining(['RunWorkflow:reconciliationWorkflow', 'provider.query', 'ledger.post', `${topic} publish`]),
    );
    expect(
      names('apipay-worker').filter((n) => n.startsWith('RunActivity:') || n.startsWith('StartActivity:')).length,
    ).toBeGreaterThan(0);
    // dispatcher: the consume, the delivery workflow's start.
    expect(names('apipay-dispatcher')).toEqual(expect.arrayContaining([`${topic} process`, 'StartWorkflow:deliveryWorkflow']));
    // The delivery workflow and its POST ran in whichever process polled the delivery queue first (both do).
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['RunWorkflow:deliveryWorkflow']));

    // Parent links: every span's parent is a span of this trace, and each step descends from the one before.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    for (const span of spans)
      if (span.parentSpanId) expect(byId.has(span.parentSpanId), `${span.service} ${span.name}'s parent`).toBe(true);
    const chain = ancestors(post, byId).map((s) => s.name);
    const order = [
      'POST /webhooks/:provider',
      'StartWorkflow:reconciliationWorkflow',
      'RunWorkflow:reconciliationWorkflow',
      'ledger.post',
      `${topic} publish`,
      `${topic} process`,
      'StartWorkflow:deliveryWorkflow',
      'RunWorkflow:deliveryWorkflow',
    ];
    const positions = order.map((name) => chain.indexOf(name));
    expect(
      positions.every((p) => p >= 0),
      `the POST's ancestors ${JSON.stringify(chain)}`,
    ).toBe(true);
    expect([...positions].sort((a, b) => b - a)).toEqual(positions); // root first when read from the POST upwards
    const query = spans.find((s) => s.name === 'provider.query')!;
    expect(ancestors(query, byId).map((s) => s.name)).toContain('RunWorkflow:reconciliationWorkflow');
  }, 240_000);
});
