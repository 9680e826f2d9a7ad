// npm run bench:outbound — N events through real Kafka → dispatcher → delivery workflows → a local receiver
// answering 200: deliveries/s, p50/p99 produce-to-receive latency (burst and steady 20/s), the bare one-activity
// workflow rate of the same server (bench/lib/baseline.ts) and the ratio; optionally deliveries parked in timers.
// Usage: npm run bench:outbound -- [--count 2000] [--rate 20] [--steady-seconds 15] [--baseline 500]
//        [--first-attempt local|activity] [--no-eager] [--start-concurrency 32] [--parked 10000] [--max-cached 500] [--worker-process]
//        [--slow-endpoints K] [--throttle R [--throttle-count 1000]]   (issue 12: bench/lib/endpoint-scenarios.ts)
//        [--mode per_delivery|batched] [--compare-count 2000] (P2: batched mode also runs a per_delivery burst of that size)
//        [--merchant-delay-ms D] (the merchant answers D ms after receiving: a remote merchant's think time)
//        [--inbound-burst N [--inbound-start-rate R] [--inbound-from acked|quarter]] (P7: the burst and steady phases again while N webhooks drain, bench/lib/inbound-competition.ts)
import { ensureBenchDatabase } from './lib/bench-db.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { bundleWorkflowCode, DefaultLogger, NativeConnection } from '@temporalio/worker';
import { createActivities } from '../src/activities/index.js';
import { parseEnv } from '../src/config/env.js';
import { loadProfile } from '../src/config/profile.js';
import { createDatabase } from '../src/db/client.js';
import { createOutboundBatchHandler } from '../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin, createProducer } from '../src/kafka/kafkajs.js';
import type { BatchHandler } from '../src/kafka/types.js';
import { createLogger } from '../src/lib/logger.js';
import { createWorkers, WORKFLOWS_PATH } from '../src/temporal-workers/build.js';
import { BOOTSTRAP_PRINCIPAL } from '../src/access/roles.js';
import { createEndpointService } from '../src/outbound/endpoints.js';
import { measureBaselineRate, quietTemporalRuntime } from './lib/baseline.js';
import { measureIsolation, measureThrottle } from './lib/endpoint-scenarios.js';
import { loadAverage, stageTimer } from './lib/stages.js';
import { percentile } from './lib/stats.js';
import { measureAgainstInboundDrain } from './lib/inbound-competition.js';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '2000' },
    rate: { type: 'string', default: '20' },
    'steady-seconds': { type: 'string', default: '15' },
    baseline: { type: 'string', default: '500' },
    'first-attempt': { type: 'string', default: 'local' },
    'no-eager': { type: 'boolean', default: false },
    'start-concurrency': { type: 'string', default: '32' },
    parked: { type: 'string', default: '0' },
    'max-cached': { type: 'string' }, // default: the shipped WORKER_MAX_CACHED_WORKFLOWS (src/config/env.ts)
    'settle-samples': { type: 'string', default: '4' }, // RSS samples 30 s apart once the parked deliveries settled
    'worker-process': { type: 'boolean', default: false },
    'slow-endpoints': { type: 'string', default: '0' },
    throttle: { type: 'string', default: '0' },
    'throttle-count': { type: 'string', default: '1000' },
    mode: { type: 'string', default: 'per_delivery' },
    'compare-count': { type: 'string', default: '2000' },
    'inbound-burst': { type: 'string', default: '0' },
    'inbound-start-rate': { type: 'string' },
    'inbound-from': { type: 'string', default: 'acked' }, // P7: delivery phases once all webhooks are acked, or a quarter
    'merchant-delay-ms': { type: 'string', default: '0' }, // the merchant answers this late (latency is taken on receipt)
  },
});
const COUNT = Number(args.count);
const RATE = Number(args.rate);
const STEADY_SECONDS = Number(args['steady-seconds']);
const PARKED = Number(args.parked);
const SLOW_ENDPOINTS = Number(args['slow-endpoints']);
const MODE = args.mode === 'batched' ? 'batched' : 'per_delivery';
const MERCHANT_DELAY_MS = Number(args['merchant-delay-ms']);
const loadBefore = loadAverage();
const shipped = parseEnv({ ADMIN_TOKEN: 'bench-admin-token-unused', SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'), ...process.env });
const maxCached = args['max-cached'] ?? String(shipped.WORKER_MAX_CACHED_WORKFLOWS);
const firstAttempt = args['first-attempt'] === 'activity' ? 'activity' : 'local';
const workerProcess = args['worker-process'];
// Eager start needs the worker in this process; a separate worker process is for measuring its memory alone.
const eager = !args['no-eager'] && !workerProcess;

quietTemporalRuntime();
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const profile = loadProfile(process.env.APIPAY_PROFILE ?? 'config/example.yaml');
profile.outbound.allow_insecure_urls = true; // the receiver is on 127.0.0.1
// Parked deliveries must stay parked for the whole run (and be terminated at its end): long waits.
profile.outbound.retry_schedule = [6 * 3600_000];
const logger = createLogger('bench', 'warn');
const database = createDatabase(await ensureBenchDatabase(), { max: 20 });
const secretsKey = randomBytes(32);
const run = randomUUID().slice(0, 8);
const taskQueue = `bench-outbound-${run}`;

// --- the merchant: answers 200 (or 500 on /parked) and notes produce-to-receive latency -------------------------
const receivedAt = new Map<string, number>();
const latencies: number[] = [];
let onReceive: (() => void) | null = null;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/parked') return void res.writeHead(500).end('parked');
    const now = Date.now();
    const event = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; data: { object: { produced_at_ms: number } } };
    if (!receivedAt.has(event.id)) {
      receivedAt.set(event.id, now);
      latencies.push(now - event.data.object.produced_at_ms);
    }
    const answer = () => res.writeHead(200).end('ok');
    if (MERCHANT_DELAY_MS > 0) setTimeout(answer, MERCHANT_DELAY_MS);
    else answer();
    onReceive?.();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const endpoints = createEndpointService({ db: database.db, secretsKey });
const merchant = `acct_bench_${run}`;
await endpoints.create(BOOTSTRAP_PRINCIPAL, { merchantAccount: merchant, url: `${receiverUrl}/hook`, eventTypes: ['*'], livemode: false });
const parkedMerchant = `acct_bench_parked_${run}`;
await endpoints.create(BOOTSTRAP_PRINCIPAL, { merchantAccount: parkedMerchant, url: `${receiverUrl}/parked`, eventTypes: ['*'], livemode: false });

// --- worker and dispatcher in this process (sharing a NativeConnection makes eager start possible) --------------
const native = await NativeConnection.connect({ address });
const temporal = new Client({ connection: native });
const activities = createActivities({ db: database.db, profile, logger, secretsKey });
let child: ChildProcess | null = null;
let onChildMem: ((json: string) => void) | null = null;
/** The child's own view of its memory (main-thread JS heap), asked for on its stdin. */
const childMem = () =>
  new Promise<string>((resolve) => {
    if (!child?.pid) return resolve('');
    onChildMem = (json) => ((onChildMem = null), resolve(json));
    child.stdin!.write('mem\n');
    setTimeout(() => resolve('(no answer)'), 5000);
  });
if (workerProcess) {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  const bundlePath = join(tmpdir(), `apipay-bench-bundle-${run}.js`);
  writeFileSync(bundlePath, code);
  child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./lib/delivery-worker.ts', import.meta.url)), taskQueue], {
    stdio: ['pipe', 'pipe', 'inherit'],
    // The shipped worker configuration (workerTuning from WORKER_* env), only the cache size overridable by --max-cached.
    env: { ...process.env, BENCH_SECRETS_KEY: secretsKey.toString('base64'), WORKER_MAX_CACHED_WORKFLOWS: maxCached, BENCH_WORKFLOW_BUNDLE: bundlePath },
  });
  child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.startsWith('mem ')) onChildMem?.(line.slice(4));
  });
  await new Promise<void>((resolve, reject) => {
    child!.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child!.once('exit', (code) => reject(new Error(`delivery worker exited with ${code}`)));
  });
}
const workerRssMb = () => {
  if (!child?.pid) return process.memoryUsage().rss / 1024 / 1024;
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
};
const workers = workerProcess ? [] : await createWorkers({
  connection: native,
  taskQueues: { delivery: taskQueue, reconciliation: taskQueue, smoke: taskQueue },
  activities,
  tuning: { maxCachedWorkflows: Number(maxCached), maxConcurrentWorkflowTaskExecutions: 64, maxConcurrentLocalActivityExecutions: 64, maxConcurrentActivityTaskExecutions: 64 },
});
const running = Promise.all(workers.map((w) => w.run()));

const topic = `apipay.bench.outbound.${run}`;
const kafkaAdmin = createKafkaAdmin({ brokers, clientId: 'bench-outbound' });
await kafkaAdmin.createTopic(topic, 4);
const consumer = createBatchConsumer({ brokers, clientId: 'bench-dispatcher', topic, groupId: `bench-${run}` });
const stages = stageTimer();
const handlerOf = (mode: 'per_delivery' | 'batched', pipelineDepth = profile.outbound.batched.pipeline_depth) =>
  createOutboundBatchHandler({
    db: database.db,
    temporal,
    taskQueue,
    profile: { ...profile, outbound: { ...profile.outbound, delivery_mode: mode, batched: { ...profile.outbound.batched, pipeline_depth: pipelineDepth } } },
    logger,
    eagerStart: eager,
    firstAttempt,
    startConcurrency: Number(args['start-concurrency']),
    secretsKey,
    observe: stages.observe,
  });
// P2: 'unpipelined' is the batched mode with pipeline_depth 0 (the offsets wait for the first attempts), the
// side-by-side baseline of the pipelined steady phase.
const handlers = { per_delivery: handlerOf('per_delivery'), batched: handlerOf('batched'), unpipelined: handlerOf('batched', 0) };
let mode: keyof typeof handlers = MODE;
const handler: BatchHandler = (batch) => handlers[mode](batch);
// Where the time goes: when each event's batch was fetched from Kafka and when its handler (txn + starts) finished.
const fetchedAt = new Map<string, number>();
const handledAt = new Map<string, number>();
await runDispatcher(consumer, async (batch) => {
  const fetched = Date.now();
  const ids = batch.messages.map((m) => (JSON.parse(m.value!.toString()) as { id: string }).id);
  for (const id of ids) fetchedAt.set(id, fetched);
  await handler(batch);
  const handled = Date.now();
  for (const id of ids) handledAt.set(id, handled);
});
const producer = await createProducer({ brokers, clientId: 'bench-producer' });

const producedAt = new Map<number, number>();
function envelope(account: string, i: number) {
  if (account === merchant) producedAt.set(i, Date.now());
  return JSON.stringify({
    id: `evt_bench_${run}_${account === merchant ? '' : 'p'}${i}`,
    object: 'event',
    type: 'payment.succeeded',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    merchant_account: account,
    data: { object: { id: `pay_${i}`, object: 'payment', amount: 1000, currency: 'eur', produced_at_ms: Date.now() } },
  });
}

async function waitForReceived(n: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (receivedAt.size < n) {
    if (Date.now() > deadline) throw new Error(`only ${receivedAt.size}/${n} delivered within ${timeoutMs} ms`);
    await new Promise<void>((resolve) => {
      onReceive = resolve;
      setTimeout(resolve, 200);
    });
  }
}

let next = 0;
const results: string[] = [];
try {
  // Warm-up: worker caches, Kafka group join, first connections.
  await producer.send(topic, [{ value: envelope(merchant, next++) }]);
  await waitForReceived(1, 60_000);
  receivedAt.clear();
  latencies.length = 0;

  // 1. Burst: N events produced as fast as Kafka takes them.
  const burst = async (count: number) => {
    receivedAt.clear();
    latencies.length = 0;
    stages.reset();
    const burstStart = performance.now();
    for (let sent = 0; sent < count; sent += 500) {
      const batch = Array.from({ length: Math.min(500, count - sent) }, () => ({ key: String(next), value: envelope(merchant, next++) }));
      await producer.send(topic, batch);
    }
    await waitForReceived(count, 900_000);
    const burstSeconds = (performance.now() - burstStart) / 1000;
    return (
      `burst     ${mode}: ${count} events → ${count} deliveries in ${burstSeconds.toFixed(1)} s: ${(count / burstSeconds).toFixed(1)} deliveries/s; ` +
      `produce-to-receive p50 ${percentile(latencies, 0.5)} ms, p99 ${percentile(latencies, 0.99)} ms`
    );
  };
  results.push(await burst(COUNT));
  if (MODE === 'batched') results.push(`stages    batched burst, handler time per stage: ${stages.report(COUNT)}`);

  // 2. Steady: RATE events/s for STEADY_SECONDS (batched: again with the pipeline off, side by side).
  const steady = async () => {
    receivedAt.clear();
    latencies.length = 0;
    const steadyCount = RATE * STEADY_SECONDS;
    const steadyStart = Date.now();
    for (let i = 0; i < steadyCount; i++) {
      const due = steadyStart + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await producer.send(topic, [{ key: String(next), value: envelope(merchant, next++) }]);
    }
    await waitForReceived(steadyCount, 120_000);
    const split = { kafka: [] as number[], dispatch: [] as number[], workflow: [] as number[] };
    for (const [id, received] of receivedAt) {
      const fetched = fetchedAt.get(id);
      const handled = handledAt.get(id);
      const produced = Number(/_(\d+)$/.exec(id)?.[1]);
      if (fetched === undefined || handled === undefined || !producedAt.has(produced)) continue;
      split.kafka.push(fetched - producedAt.get(produced)!);
      split.dispatch.push(handled - fetched);
      split.workflow.push(received - fetched);
    }
    const label = mode === 'unpipelined' ? 'batched, pipeline off' : mode;
    results.push(
      `split     ${label}, steady p50: produce→batch fetched ${percentile(split.kafka, 0.5)} ms (p99 ${percentile(split.kafka, 0.99)} ms); ` +
        `fetched→handler done ${percentile(split.dispatch, 0.5)} ms; fetched→merchant received ${percentile(split.workflow, 0.5)} ms (p99 ${percentile(split.workflow, 0.99)} ms)`,
    );
    results.push(
      `steady    ${label}: ${RATE} events/s for ${STEADY_SECONDS} s: produce-to-receive p50 ${percentile(latencies, 0.5)} ms, p99 ${percentile(latencies, 0.99)} ms ` +
        `(goal p99 ${MODE === 'batched' ? '≤ 100' : '< 1000'} ms)`,
    );
  };
  // The first phase after a burst paid for the burst's garbage collection (p99 83 vs 47 ms in one run, 64 vs 72 ms
  // with the order swapped): settle first, so that the two steady phases compare.
  await new Promise((r) => setTimeout(r, 5000));
  await steady();
  if (MODE === 'batched' && profile.outbound.batched.pipeline_depth > 0) {
    mode = 'unpipelined';
    await steady();
    mode = MODE;
  }
  // P2: the per_delivery figure of the same run, beside the batched one.
  if (MODE === 'batched' && Number(args['compare-count']) > 0) {
    mode = 'per_delivery';
    results.push(await burst(Number(args['compare-count'])));
    mode = MODE;
  }
  if (SLOW_ENDPOINTS > 0) {
    const harness = {
      rate: RATE,
      seconds: STEADY_SECONDS,
      sendOne: () => producer.send(topic, [{ key: String(next), value: envelope(merchant, next++) }]),
      latencies: () => latencies,
      reset: () => (receivedAt.clear(), (latencies.length = 0)),
      waitForReceived,
    };
    results.push(await measureIsolation({ k: SLOW_ENDPOINTS, merchant, endpoints, harness, baselineP99: percentile(latencies, 0.99) }));
  }
  if (Number(args.throttle) > 0) {
    const produce = (account: string, count: number) =>
      producer.send(topic, Array.from({ length: count }, (_, j) => ({ key: String(j), value: envelope(account, 1_000_000 + j) })));
    results.push(await measureThrottle({ rate: Number(args.throttle), count: Number(args['throttle-count']), merchant: `acct_bench_throttled_${run}`, endpoints, produce }));
  }

  // 3. What one delivery costs in Temporal terms: the history of one delivered workflow.
  // (batched mode delivers without a workflow: the sample is a per_delivery delivery, which exist in both modes' runs)
  const [sample] = await database.sql<{ id: string }[]>`select id from deliveries where merchant_account = ${merchant} and status = 'DELIVERED' order by created_at desc limit 1`;
  const history = await temporal.workflow
    .getHandle(sample!.id)
    .fetchHistory()
    .catch(() => ({ events: [] })); // batched without --compare-count: delivered without any workflow
  const E = proto.temporal.api.enums.v1.EventType;
  const names: Partial<Record<number, string>> = {
    [E.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]: 'Started',
    [E.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED]: 'Completed',
    [E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED]: 'WFTScheduled',
    [E.EVENT_TYPE_WORKFLOW_TASK_STARTED]: 'WFTStarted',
    [E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]: 'WFTCompleted',
    [E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]: 'ActivityScheduled',
    [E.EVENT_TYPE_ACTIVITY_TASK_STARTED]: 'ActivityStarted',
    [E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED]: 'ActivityCompleted',
    [E.EVENT_TYPE_MARKER_RECORDED]: 'Marker(local activity)',
    [E.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES]: 'UpsertSearchAttributes',
  };
  const types = (history.events ?? []).map((e) => names[Number(e.eventType)] ?? `type${Number(e.eventType)}`);
  results.push(`history   one delivered workflow: ${types.length} events, ${types.filter((t) => t === 'WFTStarted').length} workflow task(s): ${types.join(' ')}`);

  // 4. Optional: deliveries parked in backoff timers; worker memory and whether the server still serves.
  if (PARKED > 0) {
    const parkStart = performance.now();
    for (let sent = 0; sent < PARKED; sent += 500) {
      const batch = Array.from({ length: Math.min(500, PARKED - sent) }, (_, j) => ({ key: String(sent + j), value: envelope(parkedMerchant, sent + j) }));
      await producer.send(topic, batch);
    }
    for (;;) {
      const [row] = await database.sql<{ n: number }[]>`select count(*)::int as n from deliveries where merchant_account = ${parkedMerchant} and status = 'RETRYING'`;
      if (row!.n >= PARKED) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const parkSeconds = (performance.now() - parkStart) / 1000;
    global.gc?.();
    await new Promise((r) => setTimeout(r, 5000)); // let the last workflow tasks settle
    const rssMb = workerRssMb();
    const settleMem = await childMem();
    const heapMb = process.memoryUsage().heapUsed / 1024 / 1024;
    receivedAt.clear();
    latencies.length = 0;
    const probeStart = performance.now();
    await producer.send(topic, [{ value: envelope(merchant, next++) }]);
    await waitForReceived(1, 60_000);
    results.push(
      `parked    ${PARKED} deliveries in backoff timers after ${parkSeconds.toFixed(0)} s: ${workerProcess ? 'worker process' : 'process'} RSS ${rssMb.toFixed(0)} MB` +
        `${workerProcess ? '' : `, JS heap ${heapMb.toFixed(0)} MB`} (sticky cache ${maxCached} workflows; ` +
        `${workerProcess ? 'worker alone' : 'worker + dispatcher + receiver in one process'}; goal < 500 MB); a new event still delivered in ${(performance.now() - probeStart).toFixed(0)} ms`,
    );
    // Is it what parked workflows hold, or the high-water mark of the burst? Sample again while nothing runs.
    if (workerProcess) {
      results.push(`settle    +0 s: RSS ${rssMb.toFixed(0)} MB ${settleMem}`);
      for (let i = 1; i <= Number(args['settle-samples']); i++) {
        await new Promise((r) => setTimeout(r, 30_000));
        results.push(`settle    +${i * 30} s: RSS ${workerRssMb().toFixed(0)} MB ${await childMem()}`);
      }
    }
  }
  // 5. Optional (P7): the delivery phases alone and again while an inbound backlog drains.
  if (Number(args['inbound-burst']) > 0) {
    const produce = async (n: number) => {
      for (let sent = 0; sent < n; sent += 500) {
        await producer.send(topic, Array.from({ length: Math.min(500, n - sent) }, () => ({ key: String(next), value: envelope(merchant, next++) })));
      }
    };
    const reset = () => (receivedAt.clear(), (latencies.length = 0));
    const harness = { produce, waitForReceived, reset, latencies };
    const startRate = args['inbound-start-rate'] === undefined ? {} : { startRate: Number(args['inbound-start-rate']) };
    results.push(...(await measureAgainstInboundDrain(harness, { webhooks: Number(args['inbound-burst']), count: COUNT, rate: RATE, seconds: STEADY_SECONDS, temporal, from: args['inbound-from'] === 'quarter' ? 'quarter' : 'acked', ...startRate })));
  }
} finally {
  await consumer.stop().catch(() => {});
  await producer.close().catch(() => {});
  for (const w of workers) w.shutdown();
  await running.catch(() => {});
  child?.kill('SIGTERM');
  if (PARKED > 0 || SLOW_ENDPOINTS > 0) {
    // Do not leave thousands of parked workflows behind on a shared dev server.
    await temporal.workflowService
      .startBatchOperation({
        namespace: 'default',
        jobId: `bench-cleanup-${run}`,
        visibilityQuery: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
        reason: 'bench:outbound cleanup',
        terminationOperation: {},
      })
      .catch((error: Error) => console.warn(`cleanup of parked workflows failed: ${error.message}`));
  }
  await kafkaAdmin.close();
  server.close();
}

// 5. The bare one-activity workflow rate on the same server, for the ratio.
const baseline = await measureBaselineRate({ count: Number(args.baseline), concurrency: 32, address });
const rateOf = (line: string | undefined) => Number(/([\d.]+) deliveries\/s/.exec(line ?? '')?.[1] ?? NaN);
const burstRate = rateOf(results[0]);
console.log(
  `bench:outbound (mode: ${MODE}, first attempt: ${firstAttempt}, eager start: ${eager}, start concurrency ${args['start-concurrency']}` +
    `${MODE === 'batched' ? `, batched concurrency ${profile.outbound.batched.concurrency}, pipeline depth ${profile.outbound.batched.pipeline_depth}` : ''}${MERCHANT_DELAY_MS ? `, merchant answers after ${MERCHANT_DELAY_MS} ms` : ''}; load average ${loadBefore} before, ${loadAverage()} after)`,
);
for (const line of results) console.log(`  ${line}`);
console.log(`  baseline  ${baseline.count} one-activity workflows, concurrency ${baseline.concurrency}: ${baseline.workflowsPerSecond.toFixed(1)} workflows/s`);
console.log(`  ratio     end-to-end deliveries/s ÷ bare workflows/s = ${((burstRate / baseline.workflowsPerSecond) * 100).toFixed(0)} % (goal ≥ 70 %)`);
const compared = results.find((l) => l.startsWith('burst     per_delivery'));
if (MODE === 'batched' && compared) {
  console.log(`  modes     batched ÷ per_delivery deliveries/s = ${(burstRate / rateOf(compared)).toFixed(1)}× (P2 goal: batched ≥ 700 deliveries/s)`);
}
await native.close().catch(() => {});
await database.close();
process.exit(0);
