// Issue 33 items 3 and 4 (P14, P10): one run of npm run bench:curves (bench/curves.ts runs it --runs times). The
// batched delivery path as deployed — the real dispatcher (createOutboundBatchHandler, batched) in this process, the
// shipped delivery worker in its own (./worker-process.ts), the Kafka producer and the merchant answering 200 in a
// third (./outbound-load.ts) — measured as the work grows, each scenario a burst produced as fast as Kafka takes it:
//  - size: bursts of --sizes events to one endpoint;
//  - fan-out: --fanout-deliveries deliveries as events fanned out to K endpoints of one merchant, for each K;
//  - merchants: --merchant-events events spread over M merchants of one endpoint each, for each M.
// Each: deliveries/s from the first produce to the last receipt; the share of the raw POST budget measured in the same
// run (./post-budget.ts: POSTs/s to a merchant in its own process, 128 in flight, bench:budget's figure); peak RSS of
// each process (sampled every 500 ms); CPU per delivery of each process, the stack's services included
// (./stack-cpu.ts); the dispatcher's heap after a full GC; PostgreSQL bytes per delivery (every table and index of the
// schema). Ends with `RESULT {json}`.
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import { loadProfile } from '../../src/config/profile.js';
import { createDatabase } from '../../src/db/client.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import { createLogger } from '../../src/lib/logger.js';
import { createEndpointService } from '../../src/outbound/endpoints.js';
import { quietTemporalRuntime } from './baseline.js';
import { ensureBenchDatabase } from './bench-db.js';
import { measurePosts, startBudgetMerchant } from './post-budget.js';
import { recordProcessStats } from './process-stats.js';
import { forkRpcChild } from './rpc-child.js';
import { loadAverage, phaseLine, type Figure, type PhaseStats } from './runs.js';
import { pidCpuMs, pidRssMb, stackCpuMs, stackPid } from './stack-cpu.js';
import { stageTimer } from './stages.js';
import { startWorkerProcess } from './worker-process.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '20000,200000,1000000' },
    fanout: { type: 'string', default: '1,100,1000' },
    'fanout-deliveries': { type: 'string', default: '20000' },
    merchants: { type: 'string', default: '1,100,1000,10000' },
    'merchant-events': { type: 'string', default: '20000' },
    'budget-seconds': { type: 'string', default: '5' },
    // the unmeasured burst first: 500 left the first measured burst paying for the JIT (1,402/s and 362 µs of
    // dispatcher CPU per delivery against 2,607/s and 242 µs for the same burst later in the run, 6 Dec)
    warmup: { type: 'string', default: '20000' },
    // outbound profile keys changed for this run, e.g. '{"batched":{"pipeline_depth":2048}}' (one change at a time)
    outbound: { type: 'string' },
    'run-index': { type: 'string' },
  },
});
setFlagsFromString('--expose-gc'); // a full collection on demand, without a flag on the command line
const gc = runInNewContext('gc') as () => void;
const list = (s: string) => s.split(',').filter(Boolean).map(Number);
const loadBefore = loadAverage();
quietTemporalRuntime();
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const profile = loadProfile(process.env.APIPAY_PROFILE ?? 'config/example.yaml');
profile.outbound.allow_insecure_urls = true; // the merchant is on 127.0.0.1
profile.outbound.delivery_mode = 'batched';
if (args.outbound) {
  const override = JSON.parse(args.outbound) as { batched?: object } & Record<string, unknown>;
  Object.assign(profile.outbound, { ...override, batched: { ...profile.outbound.batched, ...override.batched } });
}
const logger = createLogger('bench', 'warn');
const database = createDatabase(await ensureBenchDatabase(), { max: 20 });
const secretsKey = randomBytes(32);
const run = randomUUID().slice(0, 8);
const taskQueue = `bench-curves-${run}`;
const topic = `apipay.bench.curves.${run}`;
const appStats = recordProcessStats('app (dispatcher)');
const loadGenerator = forkRpcChild(new URL('./outbound-load.ts', import.meta.url), 'load generator');
const load = loadGenerator.call;
const { url } = await load<{ url: string }>('setup', { run, merchant: `acct_curves_${run}`, brokers, topic, merchantDelayMs: 0 });
const endpoints = createEndpointService({ db: database.db, secretsKey });
const figures: Figure[] = [];
const phases: PhaseStats[] = [];
const lines: string[] = [];
const fig = (name: string, value: number, unit: string) => figures.push({ name, value: Math.round(value * 10) / 10, unit });

// 1. The budget, in this run: raw POSTs/s from this process to a merchant in a process of its own.
const budgetMerchant = await startBudgetMerchant();
// Both clients bench:budget measures: fetch (its headline figure when issue 33 was written) and undici.request, the
// client the sender uses (src/outbound/exchange.ts); each warmed up for a second first.
const budgetMs = Number(args['budget-seconds']) * 1000;
await measurePosts(budgetMerchant.port, 1000, 128);
const budgetFetch = await measurePosts(budgetMerchant.port, budgetMs, 128);
await measurePosts(budgetMerchant.port, 1000, 128, 'request');
const budget = await measurePosts(budgetMerchant.port, budgetMs, 128, 'request');
budgetMerchant.stop();

// 2. The worker (for deliveries whose first attempt fails: none here, but deployed beside) and the dispatcher.
const worker = await startWorkerProcess({ run, taskQueue, secretsKey, profile });
const native = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection: native });
const kafkaAdmin = createKafkaAdmin({ brokers, clientId: 'bench-curves' });
await kafkaAdmin.createTopic(topic, 4);
const consumer = createBatchConsumer({ brokers, clientId: 'bench-curves-dispatcher', topic, groupId: `bench-curves-${run}` });
const stages = stageTimer();
const handler = createOutboundBatchHandler({
  db: database.db,
  temporal,
  taskQueue,
  profile,
  logger,
  eagerStart: false, // the worker is in its own process
  firstAttempt: 'local',
  startConcurrency: 32,
  secretsKey,
  observe: stages.observe,
});
await runDispatcher(consumer, handler);

/** Every table and index of the schema, in bytes (PostgreSQL's size of what the deliveries wrote). */
const pgBytes = async () =>
  Number(
    (
      await database.sql<{ bytes: string }[]>`
        select coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as bytes from pg_class c
          join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind in ('r', 'm')`
    )[0]!.bytes,
  );
const processes = () => ({
  dispatcher: process.pid,
  worker: worker.pid,
  'load generator + merchant': loadGenerator.process.pid,
  temporal: stackPid('temporal'),
  kafka: stackPid('kafka'),
});
const cpuNow = (): Record<string, number> => ({
  ...Object.fromEntries(
    Object.entries(processes())
      .filter(([k]) => k !== 'temporal' && k !== 'kafka')
      .map(([k, pid]) => [k, pidCpuMs(pid)]),
  ),
  ...stackCpuMs(),
});

async function createEndpoints(accounts: string[], perAccount: number, path: string) {
  let next = 0;
  const one = async () => {
    for (let i = next++; i < accounts.length * perAccount; i = next++) {
      const account = accounts[Math.floor(i / perAccount)]!;
      await endpoints.create(BOOTSTRAP_PRINCIPAL, {
        merchantAccount: account,
        url: `${url}/${path}/${i}`,
        eventTypes: ['*'],
        livemode: false,
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, one));
}

/** One burst: `events` spread over `accounts`, waiting for `deliveries` receipts; its figures under `name`. */
async function burst(name: string, accounts: string[], events: number, deliveries: number) {
  await load('reset');
  stages.reset();
  appStats.reset();
  await load('stats', { reset: true });
  const peak: Record<string, number> = {};
  const sampler = setInterval(() => {
    for (const [k, pid] of Object.entries(processes())) peak[k] = Math.max(peak[k] ?? 0, pidRssMb(pid) || 0);
  }, 500);
  const bytesFrom = await pgBytes();
  const cpuFrom = cpuNow();
  const started = performance.now();
  const producing = load('spread', { accounts, count: events });
  const deadline = Date.now() + Math.max(600_000, deliveries * 5);
  for (;;) {
    const got = (await load<{ count: number }>('deliveries')).count;
    if (got >= deliveries) break;
    if (Date.now() > deadline) throw new Error(`${name}: only ${got}/${deliveries} delivered in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await producing;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const cpuTo = cpuNow();
  const bytes = (await pgBytes()) - bytesFrom;
  const rate = deliveries / seconds;
  fig(`${name}: deliveries/s`, rate, '/s');
  fig(`${name}: share of the raw POST budget (undici.request)`, (rate / budget) * 100, '%');
  fig(`${name}: share of the raw POST budget (fetch)`, (rate / budgetFetch) * 100, '%');
  fig(`${name}: PostgreSQL bytes per delivery`, bytes / deliveries, 'B');
  const cpu = Object.entries(cpuTo).map(([k, ms]) => [k, ((ms - (cpuFrom[k] ?? 0)) * 1000) / deliveries] as const);
  for (const [k, us] of cpu) fig(`${name}: CPU per delivery, ${k}`, us, 'µs');
  for (const [k, mb] of Object.entries(peak)) fig(`${name}: peak RSS, ${k}`, mb, 'MB');
  // Memory kept (a leak) or memory not yet collected (V8 grows its heap under a high allocation rate)? The dispatcher's
  // heap once a full collection ran after the burst.
  gc();
  const heapAfterGc = process.memoryUsage().heapUsed / 1048576;
  fig(`${name}: dispatcher heap after a full GC`, heapAfterGc, 'MB');
  lines.push(
    `${name}: ${deliveries} deliveries (${events} events) in ${seconds.toFixed(1)} s = ${rate.toFixed(0)}/s, ${((rate / budget) * 100).toFixed(0)} % of the budget (${((rate / budgetFetch) * 100).toFixed(0)} % of fetch's); ` +
      `PostgreSQL ${(bytes / deliveries).toFixed(0)} B per delivery`,
    `  CPU µs per delivery: ${cpu.map(([k, us]) => `${k} ${us.toFixed(0)}`).join(', ')} (total ${cpu.reduce((n, [, us]) => n + us, 0).toFixed(0)}, at most ${((2 * 1e6) / rate).toFixed(0)} on 2 cores)`,
    `  peak RSS MB: ${Object.entries(peak)
      .map(([k, mb]) => `${k} ${mb.toFixed(0)}`)
      .join(', ')}; dispatcher heap after a full GC ${heapAfterGc.toFixed(0)} MB`,
    `  stages: ${stages.report(deliveries)}`,
  );
  const stats = [appStats.snapshot(), await load<PhaseStats['processes'][number]>('stats', { reset: true })];
  phases.push({ phase: name, processes: stats });
  lines.push(`  ${phaseLine(name, stats)}`);
}

try {
  // Warm-up (not measured): the consumer group's join, connections, caches.
  const warm = [`acct_curves_warm_${run}`];
  await createEndpoints(warm, 1, 'warm');
  await burst('warm-up', warm, Number(args.warmup), Number(args.warmup));
  figures.length = 0;
  phases.length = 0;
  lines.length = 0;
  lines.push(
    `budget    raw POSTs/s to a local merchant in its own process, 128 in flight: undici.request ${budget.toFixed(0)}/s, fetch ${budgetFetch.toFixed(0)}/s`,
  );
  fig('raw POST budget, undici.request (128 in flight)', budget, '/s');
  fig('raw POST budget, fetch (128 in flight)', budgetFetch, '/s');

  const one = [`acct_curves_${run}`];
  await createEndpoints(one, 1, 'size');
  for (const n of list(args.sizes)) await burst(`size ${n}`, one, n, n);
  for (const k of list(args.fanout)) {
    const account = [`acct_curves_f${k}_${run}`];
    await createEndpoints(account, k, `fanout${k}`);
    const events = Math.max(1, Math.round(Number(args['fanout-deliveries']) / k));
    await burst(`fan-out ${k}`, account, events, events * k);
  }
  for (const m of list(args.merchants)) {
    const accounts = Array.from({ length: m }, (_, i) => `acct_curves_m${m}_${run}_${i}`);
    const from = performance.now();
    await createEndpoints(accounts, 1, `m${m}`);
    lines.push(`setup     ${m} merchants' endpoints created in ${((performance.now() - from) / 1000).toFixed(0)} s`);
    const events = Number(args['merchant-events']);
    await burst(`merchants ${m}`, accounts, events, events);
  }
} finally {
  await consumer.stop().catch(() => {});
  worker.kill('SIGTERM');
  await kafkaAdmin.close();
}
console.log(
  `bench:curves (batched${args.outbound ? `, outbound ${args.outbound}` : ''}; load average ${loadBefore} before, ${loadAverage()} after)`,
);
for (const line of lines) console.log(`  ${line}`);
loadGenerator.process.disconnect();
console.log(`RESULT ${JSON.stringify({ figures, phases, loadBefore, loadAfter: loadAverage() })}`);
await native.close().catch(() => {});
await database.close();
process.exit(0);
