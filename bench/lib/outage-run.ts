// P12 (issue 33): one run of npm run bench:outage (bench/outage.ts runs it --runs times). The app process — the real
// dispatcher in batched mode and its delivery workers — fed by ./outage-load.ts in a process of its own: a steady flow
// to --merchants merchants of --endpoints endpoints each (every event fans out to its merchant's endpoints), one
// merchant holding --share of the events. Phases: before; during (that merchant answers 503, or with --variant
// timeout never within the request timeout; with --variant none it stays up: the control, same phases); recovery (it
// answers 200 again, until the deliveries it missed are delivered, at most --recovery-max-seconds); after. Per phase: the healthy endpoints' produce-to-receive p50/p99 and
// deliveries/s; the down merchant's retrying deliveries and open workflows (sampled each second); the recovery's
// drain rate and time to drain; the busiest second of POSTs each returning endpoint saw against the ramp's allowance
// (src/outbound/recovery.ts); each process's CPU, event-loop delay and GC (./process-stats.ts). Ends with `RESULT {json}`.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import { createActivities } from '../../src/activities/index.js';
import { loadProfile } from '../../src/config/profile.js';
import { parseDuration } from '../../src/config/duration.js';
import { createDatabase } from '../../src/db/client.js';
import { createOutboundBatchHandler } from '../../src/dispatcher/outbound-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin } from '../../src/kafka/kafkajs.js';
import { createLogger } from '../../src/lib/logger.js';
import { createEndpointService } from '../../src/outbound/endpoints.js';
import { rampRate } from '../../src/outbound/recovery.js';
import { createWorkers } from '../../src/temporal-workers/build.js';
import { quietTemporalRuntime } from './baseline.js';
import { ensureBenchDatabase, removeBenchRows } from './bench-db.js';
import { recordProcessStats, type ProcessStats } from './process-stats.js';
import { loadAverage, phaseLine, type Figure, type PhaseStats } from './runs.js';
import { percentile } from './stats.js';
import { forkRpcChild } from './rpc-child.js';
import { stageTimeline } from './outage-timeline.js';
import { stageTimer } from './stages.js';
import { pidCpuMs, stackCpuMs } from './stack-cpu.js';
import { startWorkerProcess } from './worker-process.js';

const { values: args } = parseArgs({
  options: {
    rate: { type: 'string', default: '60' }, // events/s (each fans out to --endpoints deliveries)
    merchants: { type: 'string', default: '20' },
    endpoints: { type: 'string', default: '5' },
    share: { type: 'string', default: '0.3' },
    variant: { type: 'string', default: '503' },
    before: { type: 'string', default: '20' },
    during: { type: 'string', default: '40' },
    'recovery-max-seconds': { type: 'string', default: '150' },
    // --variant none: nothing to drain, so the recovery phase lasts this long (an outage run's drain took 54–59 s).
    'control-recovery-seconds': { type: 'string', default: '60' },
    after: { type: 'string', default: '20' },
    'no-ramp': { type: 'boolean', default: false },
    // The ramp's top rate per endpoint (the profile's ramp_max_per_second, 100): the recovery's peak drain rate.
    'ramp-max': { type: 'string' },
    // P13: the endpoint circuit, shortened like the schedule (the shipped one opens after 1 min and probes every minute).
    'no-circuit': { type: 'boolean', default: false },
    'circuit-open-after': { type: 'string', default: '5s' },
    // P16: or on this many failures in a row however young the streak (0: off, as before P16); the profile's default.
    'circuit-open-after-burst': { type: 'string' },
    'probe-every': { type: 'string', default: '5s' }, // P12 off (no jitter, no ramp): the stampede it prevents
    schedule: { type: 'string', default: '5s,10s,20s,30s,30s,30s,30s,30s,30s,30s' },
    // Where the delivery workers run: `process` (default) is a process of their own at a lower CPU priority (nice
    // --worker-nice), as production runs them in their own deployment; `inline` is the dispatcher's process.
    workers: { type: 'string', default: 'process' },
    'worker-nice': { type: 'string', default: '10' },
    // The outage's first seconds in 100 ms steps (./outage-timeline.ts).
    timeline: { type: 'boolean', default: false },
    // Where the down merchant is served: `process` (default since 7 Dec), a process of its own, as its server is not
    // the healthy merchants' in production; `shared`, the load generator's process and event loop with the healthy
    // merchants (every run before 7 Dec), where its POSTs could delay the healthy ones' receipt (no difference measured).
    'down-merchant': { type: 'string', default: 'process' },
    // Begin `before` without waiting for the app's first major GC (as every run before 7 Dec 17:03 UTC did).
    'no-gc-warm': { type: 'boolean', default: false },
    'gc-warm-max-seconds': { type: 'string', default: '180' },
    // Leave the run's deliveries, events and endpoints in the bench database (by default they are removed at its end).
    'keep-rows': { type: 'boolean', default: false },
    'run-index': { type: 'string' },
  },
});
const RATE = Number(args.rate);
const MERCHANTS = Number(args.merchants);
const ENDPOINTS = Number(args.endpoints);
const VARIANT = args.variant === 'timeout' ? 'timeout' : args.variant === 'none' ? 'none' : '503';
const loadBefore = loadAverage();
quietTemporalRuntime();
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const profile = loadProfile(process.env.APIPAY_PROFILE ?? 'config/example.yaml');
profile.outbound.allow_insecure_urls = true;
profile.outbound.delivery_mode = 'batched';
// Shortened so that an outage of a minute shows its whole retry cycle within the run (the shipped one is 1m, 5m, 30m…).
profile.outbound.retry_schedule = args.schedule.split(',').map(parseDuration);
if (args['no-ramp']) profile.outbound.recovery = { ...profile.outbound.recovery, jitter: 0, ramp: false };
if (args['ramp-max'] !== undefined)
  profile.outbound.recovery = { ...profile.outbound.recovery, ramp_max_per_second: Number(args['ramp-max']) };
profile.outbound.circuit = {
  ...profile.outbound.circuit,
  open_after_failures: args['no-circuit'] ? 0 : profile.outbound.circuit.open_after_failures,
  open_after: parseDuration(args['circuit-open-after']),
  ...(args['circuit-open-after-burst'] === undefined ? {} : { open_after_burst: Number(args['circuit-open-after-burst']) }),
  probe_every: parseDuration(args['probe-every']),
};
const recovery = profile.outbound.recovery;
const logger = createLogger('bench', 'warn');
const database = createDatabase(await ensureBenchDatabase(), { max: 20 });
const secretsKey = randomBytes(32);
const run = randomUUID().slice(0, 8);
const taskQueue = `bench-outage-${run}`;
const topic = `apipay.bench.outage.${run}`;
const merchants = Array.from({ length: MERCHANTS }, (_, i) => `acct_outage_${run}_${i}`);

// --- the load generator and the merchants ----------------------------------------------------------------------
const appStats = recordProcessStats('app (dispatcher + workers)');
const loadGenerator = forkRpcChild(new URL('./outage-load.ts', import.meta.url), 'load generator');
const loadProcess = loadGenerator.process;
const load = loadGenerator.call;
const SEPARATE_DOWN = args['down-merchant'] !== 'shared';
const setupBody = { run, merchants, share: Number(args.share), brokers, topic };
const { url } = await load<{ url: string }>('setup', { ...setupBody, serve: SEPARATE_DOWN ? 'healthy' : 'all' });
const downMerchant = SEPARATE_DOWN ? forkRpcChild(new URL('./outage-load.ts', import.meta.url), 'down merchant') : null;
const downUrl = downMerchant ? (await downMerchant.call<{ url: string }>('setup', { ...setupBody, serve: 'down' })).url : url;
/** The down merchant's process (the load generator's when shared). */
const down = downMerchant?.call ?? load;

const endpointService = createEndpointService({ db: database.db, secretsKey });
const downEndpoints: string[] = [];
const allEndpoints: string[] = [];
for (const [m, merchantAccount] of merchants.entries())
  for (let e = 0; e < ENDPOINTS; e++) {
    const { endpoint } = await endpointService.create(BOOTSTRAP_PRINCIPAL, {
      merchantAccount,
      url: `${m === 0 ? downUrl : url}/m${m}/e${e}`,
      eventTypes: ['*'],
      livemode: false,
    });
    if (m === 0) downEndpoints.push(endpoint.id);
    allEndpoints.push(endpoint.id);
  }

// --- workers and the dispatcher -----------------------------------------------------------------------------------
const native = await NativeConnection.connect({ address });
const temporal = new Client({ connection: native });
const workerChild =
  args.workers === 'process'
    ? await startWorkerProcess({ run, taskQueue, secretsKey, profile, nice: Number(args['worker-nice']) })
    : null;
const workers = workerChild
  ? []
  : await createWorkers({
      connection: native,
      taskQueues: { delivery: taskQueue, reconciliation: taskQueue, smoke: taskQueue },
      activities: createActivities({ db: database.db, profile, logger, secretsKey }),
      tuning: {
        maxCachedWorkflows: 2000,
        maxConcurrentWorkflowTaskExecutions: 64,
        maxConcurrentLocalActivityExecutions: 64,
        maxConcurrentActivityTaskExecutions: 64,
      },
    });
const running = Promise.all(workers.map((w) => w.run()));
const kafkaAdmin = createKafkaAdmin({ brokers, clientId: 'bench-outage' });
await kafkaAdmin.createTopic(topic, 4);
const consumer = createBatchConsumer({ brokers, clientId: 'bench-outage-dispatcher', topic, groupId: `bench-outage-${run}` });
let handled = 0; // events the dispatcher handled, for the per-stage figures
const stages = stageTimer(); // where the dispatcher's time goes, per phase (fan_out, sign, reserve, post, record, handoff)
const timeline = args.timeline ? stageTimeline({ worker: workerChild?.pid }) : null;
const handler = createOutboundBatchHandler({
  db: database.db,
  temporal,
  taskQueue,
  profile,
  logger,
  eagerStart: true,
  firstAttempt: 'local',
  startConcurrency: 32,
  secretsKey,
  observe: (stage, ms, count) => {
    if (stage === 'fan_out') handled += count;
    stages.observe(stage, ms, count);
    timeline?.observe(stage, ms, count);
  },
});
await runDispatcher(consumer, handler);

/** The CPU time so far of the delivery worker process (0 when the workers run inline). */
const childCpuMs = (child: ChildProcess | null) => pidCpuMs(child?.pid);

// --- sampling: the down merchant's deliveries and workflows, each second ----------------------------------------
interface Sample {
  at: number;
  retrying: number;
  /** P13: the down merchant's deliveries parked (circuit open, or queued behind the backlog). */
  parked: number;
  open: number;
  missed: number;
}
const samples: Sample[] = [];
let upAt = Infinity;
// By the endpoint index: deliveries has no index on merchant_account, and a scan of it each second cost PostgreSQL
// ~0.5 of a core once the bench database held 5.8 M deliveries (6 Dec, after bench:curves): the bench's own load.
const sampleOnce = async () => {
  const at = Date.now();
  const [row] = await database.sql<{ retrying: number; parked: number; missed: number }[]>`
    select count(*) filter (where status = 'RETRYING')::int as retrying, count(*) filter (where parked_since is not null)::int as parked,
           count(*) filter (where status <> 'DELIVERED' and created_at < ${new Date(Math.min(upAt, at)).toISOString()}::timestamptz)::int as missed
      from deliveries where endpoint_id in ${database.sql(downEndpoints)}`;
  const open = await temporal.workflow.count(`TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`).then(
    (c) => c.count,
    () => NaN,
  );
  samples.push({ at, retrying: row!.retrying, parked: row!.parked, open, missed: row!.missed });
};
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    const started = Date.now();
    await sampleOnce().catch((error: Error) => {
      if (!samples.length) console.warn(`sampling failed: ${error.message}`);
    });
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - started))));
  }
})();

const phases: PhaseStats[] = [];
const lines: string[] = [];
const figures: Figure[] = [];
const bounds: { name: string; from: number; to: number }[] = [];
const processStats = async (): Promise<ProcessStats[]> => {
  const app = appStats.snapshot();
  appStats.reset();
  const children = [await load<ProcessStats>('stats')];
  if (downMerchant) children.push(await downMerchant.call<ProcessStats>('stats'));
  return [app, ...children];
};
async function phase(name: string, work: () => Promise<void>) {
  await processStats();
  stages.reset();
  const workerCpuFrom = childCpuMs(workerChild);
  const stackFrom = stackCpuMs();
  const handledAt = handled;
  const from = Date.now();
  await work();
  bounds.push({ name, from, to: Date.now() });
  const processes = await processStats();
  phases.push({ phase: name, processes });
  lines.push(phaseLine(name, processes));
  const stackTo = stackCpuMs();
  const seconds = (Date.now() - from) / 1000;
  const busy = Object.entries(stackTo).map(([k, v]) => `${k} ${((v - (stackFrom[k] ?? 0)) / 1000 / seconds).toFixed(2)}`);
  if (workerChild) busy.push(`delivery worker ${((childCpuMs(workerChild) - workerCpuFrom) / 1000 / seconds).toFixed(2)}`);
  lines.push(`procs     ${name}: cores busy in the stack's processes: ${busy.join(', ')}`);
  if (workerChild)
    lines.push(
      `procs     ${name}: delivery worker process (nice ${args['worker-nice']}): CPU ${childCpuMs(workerChild) - workerCpuFrom} ms`,
    );
  lines.push(
    `stages    ${name}: dispatcher time per stage (per 1,000 events handled): ${stages.report(Math.max(1, handled - handledAt))}`,
  );
}
const sleep = (s: number) => new Promise<void>((r) => setTimeout(r, s * 1000));
let gcWarmS: number | undefined;

try {
  await load('start', { rate: RATE });
  // Warm-up (not measured): the consumer group's join, first connections, caches — until the flow is delivered.
  const warmUntil = Date.now() + 300_000;
  while ((await load<{ count: number }>('count')).count === 0 && Date.now() < warmUntil) await sleep(1);
  await sleep(10);
  // V8's steady state before `before`: a new process runs on a large initial old-generation limit with no major GC at
  // all, then collects every ~6 s from its first one on (the control of 7 Dec under --trace-gc: 80 MB live, the first
  // mark-compact 88 s in at 278 MB), which put every major GC pause of a run in the phases after `before`. So the
  // warm-up lasts until the app process has had a major GC under the flow (the ones while modules load, in its first
  // seconds, leave the limit large), at most --gc-warm-max-seconds.
  const gcWarmFrom = Date.now();
  const majorsAtFlow = appStats.majorGcs();
  while (
    !args['no-gc-warm'] &&
    appStats.majorGcs() === majorsAtFlow &&
    Date.now() - gcWarmFrom < Number(args['gc-warm-max-seconds']) * 1000
  )
    await sleep(1);
  gcWarmS = (Date.now() - gcWarmFrom) / 1000;
  await sleep(5);
  await phase('before', () => sleep(Number(args.before)));
  await down('mode', { mode: VARIANT === 'none' ? 'up' : VARIANT });
  await phase('during', () => sleep(Number(args.during)));
  await down('mode', { mode: 'up' });
  upAt = Date.now();
  let drainedAt: number | null = null;
  await phase('recovery', async () => {
    if (VARIANT === 'none') return sleep(Number(args['control-recovery-seconds'])); // the control: nothing to drain
    const deadline = upAt + Number(args['recovery-max-seconds']) * 1000;
    while (Date.now() < deadline) {
      await sleep(1);
      const last = samples.at(-1);
      if (last && last.at > upAt + 1000 && last.missed === 0) {
        drainedAt = last.at;
        break;
      }
    }
  });
  await phase('after', () => sleep(Number(args.after)));
  await load('stop');
  await sleep(5); // the last events' deliveries
  sampling = false;
  await sampler;

  // --- the figures ----------------------------------------------------------------------------------------------
  type Collected = { healthy: [number, number][]; downPosts: [number, number, number, number, number][] };
  const { healthy } = await load<Collected>('collect');
  const { downPosts } = await down<Collected>('collect');
  const of = (name: string) => bounds.find((b) => b.name === name)!;
  const before = of('before');
  let beforeP99 = NaN;
  for (const b of bounds) {
    const lat = healthy.filter(([p]) => p >= b.from && p < b.to).map(([p, r]) => r - p);
    const got = healthy.filter(([, r]) => r >= b.from && r < b.to).length;
    const perS = got / ((b.to - b.from) / 1000);
    const p50 = percentile(lat, 0.5);
    const p99 = percentile(lat, 0.99);
    if (b === before) beforeP99 = p99;
    const ss = samples.filter((s) => s.at >= b.from && s.at < b.to);
    const maxRetrying = Math.max(0, ...ss.map((s) => s.retrying));
    const maxOpen = Math.max(0, ...ss.map((s) => s.open).filter((n) => !Number.isNaN(n)));
    const maxParked = Math.max(0, ...ss.map((s) => s.parked));
    const downGot = downPosts.filter(([, at, status]) => at >= b.from && at < b.to && status === 200).length;
    figures.push({ name: `${b.name}: healthy p50`, value: p50, unit: 'ms' });
    figures.push({
      name: `${b.name}: healthy p99`,
      value: p99,
      unit: 'ms',
    });
    if (b !== before && (b.name === 'during' || b.name === 'recovery'))
      figures.push({
        name: `${b.name}: healthy p99 ÷ before`,
        value: Math.round((p99 / beforeP99) * 100) / 100,
        unit: '×',
        goal: { id: 'P12', op: '<=', value: 1.5 },
      });
    figures.push({ name: `${b.name}: healthy deliveries/s`, value: Math.round(perS), unit: '/s' });
    figures.push({ name: `${b.name}: down merchant RETRYING (max)`, value: maxRetrying, unit: '' });
    figures.push({ name: `${b.name}: open workflows (max)`, value: maxOpen, unit: '' });
    figures.push({ name: `${b.name}: down merchant parked (max)`, value: maxParked, unit: '' });
    lines.push(
      `phase     ${b.name} (${((b.to - b.from) / 1000).toFixed(0)} s): healthy p50 ${p50} ms, p99 ${p99} ms over ${lat.length} deliveries, ${perS.toFixed(0)} healthy deliveries/s; ` +
        `down merchant: ${downGot} delivered, RETRYING up to ${maxRetrying}, parked up to ${maxParked}, open workflows up to ${maxOpen}`,
    );
  }
  // The healthy p99 in 5-second windows from before's start (by produce time), a bar at each phase's start: a tail
  // that comes and goes on a period of its own (not the outage's) shows here, and what a 20-second `before` caught of it.
  const series: string[] = [];
  for (let t = before.from; t < bounds.at(-1)!.to; t += 5000) {
    const lat = healthy.filter(([p]) => p >= t && p < t + 5000).map(([p, r]) => r - p);
    const bar = bounds.some((b) => b !== before && b.from >= t && b.from < t + 5000) ? '| ' : '';
    series.push(`${bar}${lat.length ? percentile(lat, 0.99).toFixed(0) : '-'}`);
  }
  lines.push(`series    healthy p99 (ms) per 5 s from before's start: ${series.join(' ')}`);
  const rec = of('recovery');
  // P13: the outage before and after the down merchant's circuit opened (its first parked delivery), apart.
  const during = of('during');
  const openAt = samples.find((x) => x.at >= during.from && x.parked > 0)?.at ?? null; // the first sample seeing any parked
  if (openAt !== null) {
    const lat = (from: number, to: number) => healthy.filter(([p]) => p >= from && p < to).map(([p, r]) => r - p);
    const early = lat(during.from, openAt);
    const open = lat(openAt, during.to);
    figures.push({ name: 'during: circuit opened after', value: Math.round((openAt - during.from) / 100) / 10, unit: 's' });
    figures.push({ name: 'during, before the circuit opened: healthy p99', value: percentile(early, 0.99), unit: 'ms' });
    figures.push({ name: 'during, circuit open: healthy p99', value: percentile(open, 0.99), unit: 'ms' });
    figures.push({
      name: 'during, circuit open: healthy p99 ÷ before',
      value: Math.round((percentile(open, 0.99) / beforeP99) * 100) / 100,
      unit: '×',
    });
    lines.push(
      `circuit   opened ${((openAt - during.from) / 1000).toFixed(1)} s into the outage; healthy p99 ${percentile(early, 0.99)} ms before it opened (${early.length} deliveries), ${percentile(open, 0.99)} ms once open (${open.length})`,
    );
  }
  timeline?.stop();
  if (timeline) lines.push(...timeline.report(healthy, during.from));
  const missedAtUp = samples.find((s) => s.at >= upAt)?.missed ?? NaN;
  const drainS = drainedAt === null ? NaN : ((drainedAt as number) - upAt) / 1000;
  figures.push({ name: 'recovery: backlog at return', value: missedAtUp, unit: 'deliveries' });
  figures.push({ name: 'recovery: time until backlog gone', value: Math.round(drainS * 10) / 10, unit: 's' });
  figures.push({ name: 'recovery: drain rate', value: Math.round(missedAtUp / drainS), unit: '/s' });
  // The busiest second each returning endpoint saw, against what its ramp allowed in that second.
  const since = await database.sql<{ id: string; at: number | null }[]>`
    select id, (extract(epoch from recovering_since) * 1000)::float8 as at from webhook_endpoints where id in ${database.sql(downEndpoints)}`;
  const rampFrom = new Map(since.map((r) => [r.id, r.at]));
  let busiest = 0;
  let worstRatio = 0;
  let worstRepeats = 0; // of the POSTs in the worst second, those of an event the endpoint had seen before (retries)
  let worstPosts = 0;
  let worstWindow: string[] = []; // the worst second's POSTs: r(etry)/f(irst) @ s after recovering_since / age since produced
  for (let e = 0; e < ENDPOINTS; e++) {
    const posts = downPosts.filter(([i, at]) => i === e && at >= rec.from).sort((a, b) => a[1] - b[1]);
    const times = posts.map(([, at]) => at);
    const from = rampFrom.get(downEndpoints[e]!) ?? null;
    for (let i = 0, j = 0; i < times.length; i++) {
      while (times[i]! - times[j]! >= 1000) j++;
      const n = i - j + 1;
      busiest = Math.max(busiest, n);
      if (from === null || args['no-ramp']) continue;
      let allowed = 0; // the ramp's POSTs over the second before this one, 10 ms steps
      for (let t = times[i]! - 1000; t < times[i]!; t += 10)
        allowed += (t < from ? Infinity : (rampRate(t - from, recovery, null) ?? Infinity)) / 100;
      if (Number.isFinite(allowed) && n / (allowed + 1) > worstRatio) {
        worstRatio = n / (allowed + 1);
        worstPosts = n;
        worstRepeats = posts.slice(j, i + 1).filter((p) => p[4] === 1).length;
        worstWindow = posts
          .slice(j, i + 1)
          .map((p) => `${p[4] === 1 ? 'r' : 'f'}@${((p[1] - from) / 1000).toFixed(2)}s/p${((p[1] - p[3]) / 1000).toFixed(1)}`);
      }
    }
  }
  const beforeRate = (RATE * Number(args.share) * 1) / 1; // events/s of the down merchant = POSTs/s to each of its endpoints
  figures.push({ name: 'recovery: busiest second at one returning endpoint', value: busiest, unit: 'POSTs' });
  figures.push({ name: 'recovery: retries in the worst second against the ramp', value: worstRepeats, unit: 'POSTs' });
  if (!args['no-ramp'])
    figures.push({
      name: 'recovery: busiest second ÷ (ramp allowance + 1)',
      value: Math.round(worstRatio * 100) / 100,
      unit: '×',
      goal: { id: 'P12', op: '<=', value: 1 },
    });
  lines.push(
    `recovery  backlog at return ${missedAtUp} deliveries, gone after ${drainS.toFixed(1)} s (${(missedAtUp / drainS).toFixed(0)} deliveries/s); ` +
      `busiest second at one returning endpoint ${busiest} POSTs (its live flow ${beforeRate.toFixed(0)}/s; ramp ${args['no-ramp'] ? 'off' : `${recovery.ramp_start_per_second}/s doubling every ${recovery.ramp_interval / 1000} s to ${recovery.ramp_max_per_second}/s`}); ` +
      (args['no-ramp']
        ? ''
        : `busiest second ÷ (ramp allowance + 1) at worst ${worstRatio.toFixed(2)} (goal ≤ 1): ${worstPosts} POSTs, ${worstRepeats} of them retries: ${worstWindow.join(' ')}`),
  );
} finally {
  sampling = false;
  await consumer.stop().catch(() => {});
  for (const w of workers) w.shutdown();
  const workerExited = workerChild && workerChild.exitCode === null ? new Promise((r) => workerChild.once('exit', r)) : null;
  workerChild?.kill('SIGTERM');
  await running.catch(() => {});
  await Promise.race([workerExited, sleep(10)]); // its last writes land before the run's rows are removed
  await temporal.workflowService
    .startBatchOperation({
      namespace: 'default',
      jobId: `bench-outage-cleanup-${run}`,
      visibilityQuery: `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`,
      reason: 'bench:outage cleanup',
      terminationOperation: {},
    })
    .catch((error: Error) => console.warn(`cleanup of open workflows failed: ${error.message}`));
  await kafkaAdmin.close().catch(() => {});
}

console.log(
  `bench:outage (batched; ${RATE} events/s to ${MERCHANTS} merchants × ${ENDPOINTS} endpoints = ${RATE * ENDPOINTS} deliveries/s; merchant 0 holds ${Number(args.share) * 100} % and ${VARIANT === 'none' ? 'stays up (the control: no outage; recovery phase ' + args['control-recovery-seconds'] + ' s)' : VARIANT === '503' ? 'goes answering 503' : 'goes silent past the request timeout'} for ${args.during} s; ` +
    `retry schedule ${args.schedule}; circuit ${args['no-circuit'] ? 'OFF' : `opens after ${profile.outbound.circuit.open_after_failures} failures and ${args['circuit-open-after']} or ${profile.outbound.circuit.open_after_burst || '(off)'} in a row, probes every ${args['probe-every']}`}; workers ${args.workers === 'process' ? `in their own process (nice ${args['worker-nice']})` : 'in the app process'}; down merchant ${SEPARATE_DOWN ? 'in a process of its own' : "in the healthy merchants' process"}; ${args['no-gc-warm'] ? 'no wait for a major GC' : `the app's first major GC ${gcWarmS?.toFixed(0) ?? '?'} s after the warm-up`}; recovery ${args['no-ramp'] ? 'jitter and ramp OFF' : `jitter ${recovery.jitter}, ramp after ${recovery.ramp_after / 1000} s`}; load average ${loadBefore} before, ${loadAverage()} after)`,
);
for (const line of lines) console.log(`  ${line}`);
loadProcess.disconnect();
downMerchant?.process.disconnect();
console.log(`RESULT ${JSON.stringify({ figures, phases, loadBefore, loadAfter: loadAverage() })}`);
await native.close().catch(() => {});
if (!args['keep-rows'])
  await removeBenchRows(database.sql, allEndpoints, merchants).catch((error: Error) =>
    console.warn(`removing the run's rows failed: ${error.message}`),
  );
await database.close();
process.exit(0);
