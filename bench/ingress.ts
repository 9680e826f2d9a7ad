// `npm run bench:ingress`: provider webhooks acknowledged per second with durable receipts, p50/p99 at several
// connection counts, for the real ingress (group commit) and, in the same run and database, a naive handler that
// commits one transaction per request (BEGIN, registry insert, receipt insert, COMMIT); prints the ratio. Workflow starts are deferred to the sweep.
// Env: BENCH_SECONDS (per level, default 5), BENCH_CONNECTIONS (default 16,64,256), BENCH_DATABASE_URL.
// `-- --rate R[,R2…] [--seconds S]` (P4): the open-loop SLO instead: the closed-loop peak at 256 connections, then R
// webhooks/s offered on a clock for S seconds (default 10), latency from each request's scheduled time, p50/p99/p99.9.
// P8: everything `--runs N` times (default 3), then min / median / max of each figure (bench/lib/runs.ts), with the
// event-loop delay and GC of the ingress process and of the load generator, which runs in a process of its own
// (bench/lib/ingress-load.ts), per phase, and the load average before and after each run.
import { BENCH_DATABASE_URL, ensureBenchDatabase } from './lib/bench-db.js';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LoadResult } from './lib/http-load.js';
import type { OpenLoopResult } from './lib/open-loop.js';
import type { ProcessStats } from './lib/process-stats.js';
import { loadAverage, phaseLine, report, type Figure, type PhaseStats, type RunResult } from './lib/runs.js';

const DATABASE_URL = BENCH_DATABASE_URL;
const { values: args } = parseArgs({ options: { rate: { type: 'string' }, seconds: { type: 'string' }, runs: { type: 'string', default: '3' } } });
const RUNS = Number(args.runs);
if (!(RUNS >= 1)) {
  console.error(`bench:ingress: --runs must be a positive number (got ${args.runs})`);
  process.exit(2);
}
const RATES = args.rate === undefined ? undefined : args.rate.split(',').map(Number);
if (RATES?.some((r) => !(r > 0))) {
  console.error(`bench:ingress: --rate must be positive numbers of webhooks per second (got ${args.rate})`);
  process.exit(2);
}
const SECONDS = Number(args.seconds ?? process.env.BENCH_SECONDS ?? (RATES ? 10 : 5));
if (!(SECONDS > 0)) {
  console.error(`bench:ingress: --seconds must be a positive number (got ${args.seconds})`);
  process.exit(2);
}
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '16,64,256').split(',').map(Number);

type Mode = 'group' | 'naive' | 'statement';

async function startServer(mode: Mode): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./lib/ingress-server.ts', import.meta.url).pathname], {
    env: { ...process.env, MODE: mode, BENCH_DATABASE_URL: DATABASE_URL },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`ingress server exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        const message = JSON.parse(line) as { ready?: number };
        if (message.ready) resolve(message.ready);
      } catch {
        // not ours
      }
    });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

// The load generator, a process of its own for the whole bench (P8).
const loader = fork(fileURLToPath(new URL('./lib/ingress-load.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
let rpcId = 0;
const waiting = new Map<number, (m: { result?: unknown; error?: string }) => void>();
loader.on('message', (m: { id: number; result?: unknown; error?: string }) => {
  waiting.get(m.id)?.(m);
  waiting.delete(m.id);
});
function ask<T>(body: Record<string, unknown>): Promise<{ result: T; stats: ProcessStats }> {
  return new Promise((resolve, reject) => {
    const id = ++rpcId;
    waiting.set(id, (m) => (m.error !== undefined ? reject(new Error(m.error)) : resolve(m.result as { result: T; stats: ProcessStats })));
    loader.send({ id, ...body });
  });
}
let figures: Figure[] = [];
let phases: PhaseStats[] = [];
/** One load phase against `url`, with both processes' event-loop delay and GC over it. */
async function phase<T>(name: string, url: string, body: Record<string, unknown>): Promise<T> {
  await fetch(`${url}/bench/process-stats?reset`);
  const { result, stats } = await ask<T>({ url, ...body });
  const server = (await (await fetch(`${url}/bench/process-stats?reset`)).json()) as ProcessStats;
  phases.push({ phase: name, processes: [server, stats] });
  console.log(phaseLine(name, [server, stats]));
  return result;
}
const closedLoop = (name: string, url: string, connections: number) =>
  phase<LoadResult>(name, url, { op: 'closed', connections, durationMs: SECONDS * 1000, warmupMs: 1000 });

async function measure(mode: Mode): Promise<{ results: LoadResult[]; stats: { transactions: number; receipts: number } }> {
  const { url, child } = await startServer(mode);
  try {
    const results: LoadResult[] = [];
    for (const connections of CONNECTIONS) {
      const result = await closedLoop(`${mode} ${connections} conns`, url, connections);
      figures.push({ name: `${mode} ${connections} conns: acks/s`, value: Math.round(result.perSecond), unit: '/s' }, { name: `${mode} ${connections} conns: p99`, value: result.p99Ms, unit: 'ms' });
      results.push(result);
      console.log(
        `  ${mode.padEnd(9)} ${String(connections).padStart(4)} conns: ${result.perSecond.toFixed(0).padStart(6)} acks/s  p50 ${result.p50Ms.toFixed(1)} ms  p99 ${result.p99Ms.toFixed(1)} ms  max ${result.maxMs.toFixed(1)} ms  non-200 ${result.failed}`,
      );
    }
    const stats = (await (await fetch(`${url}/bench/stats`)).json()) as { transactions: number; receipts: number };
    return { results, stats };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function openLoop(rates: number[]): Promise<void> {
  const { url, child } = await startServer('group');
  try {
    console.log(`bench:ingress open loop — the shipped ingress (group commit), database ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`);
    console.log('  closed loop first (256 keep-alive connections, each sends when answered): the peak the box reaches');
    const peak = await closedLoop('closed loop 256 conns', url, 256);
    figures.push({ name: 'closed loop 256 conns: acks/s', value: Math.round(peak.perSecond), unit: '/s' });
    console.log(`  closed 256 conns: ${peak.perSecond.toFixed(0)} acks/s  p50 ${peak.p50Ms.toFixed(1)} ms  p99 ${peak.p99Ms.toFixed(1)} ms  non-200 ${peak.failed}`);
    console.log(`  open loop: each rate offered on a clock for ${SECONDS}s after 1s warm-up; latency from the scheduled send time`);
    console.log('\n| offered /s | achieved /s | p50 ms | p99 ms | p99.9 ms | max ms | non-200 | max in flight | sender lag p99 ms |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const rate of rates) {
      const r = await phase<OpenLoopResult>(`open loop ${rate}/s`, url, { op: 'open', rate, durationMs: SECONDS * 1000, warmupMs: 1000 });
      const goal = rate === 3000 ? { p99: { id: 'P4', op: '<=' as const, value: 50 }, failed: { id: 'P4', op: '==' as const, value: 0 } } : undefined;
      figures.push(
        { name: `open ${rate}/s: achieved`, value: Math.round(r.achievedPerSecond), unit: '/s' },
        { name: `open ${rate}/s: p50`, value: r.p50Ms, unit: 'ms' },
        { name: `open ${rate}/s: p99`, value: r.p99Ms, unit: 'ms', ...(goal ? { goal: goal.p99 } : {}) },
        { name: `open ${rate}/s: p99.9`, value: r.p999Ms, unit: 'ms' },
        { name: `open ${rate}/s: max`, value: r.maxMs, unit: 'ms' },
        { name: `open ${rate}/s: non-200`, value: r.failed, unit: 'answers', ...(goal ? { goal: goal.failed } : {}) },
        { name: `open ${rate}/s: sender lag p99`, value: r.sendLagP99Ms, unit: 'ms' },
      );
      console.log(`| ${rate} | ${r.achievedPerSecond.toFixed(0)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.p999Ms.toFixed(1)} | ${r.maxMs.toFixed(1)} | ${r.failed} | ${r.maxInFlight} | ${r.sendLagP99Ms.toFixed(1)} |`);
      if (r.failed) console.log(`  non-200 at ${rate}/s: ${JSON.stringify(r.failures)}`);
      if (rate === 3000) console.log(`  at 3000/s: p99 ${r.p99Ms.toFixed(1)} ms (goal ≤ 50 ms) ${r.p99Ms <= 50 ? 'met' : 'NOT met'}`);
    }
    console.log(`closed-loop peak at 256 connections: ${peak.perSecond.toFixed(0)} acks/s, p99 ${peak.p99Ms.toFixed(1)} ms`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

await ensureBenchDatabase(DATABASE_URL);
const runs: RunResult[] = [];
for (let i = 1; i <= RUNS; i++) {
  const loadBefore = loadAverage();
  console.log(`\nrun ${i}/${RUNS} — load average ${loadBefore}`);
  figures = [];
  phases = [];
  if (RATES) await openLoop(RATES);
  else await closedLoops();
  runs.push({ figures, phases, loadBefore, loadAfter: loadAverage() });
  console.log(`run ${i}/${RUNS} done — load average ${loadAverage()}`);
}
console.log(report(`bench:ingress ${process.argv.slice(2).join(' ')}`, runs));
loader.disconnect();
process.exit(0);

async function closedLoops(): Promise<void> {
  console.log(`bench:ingress — ${SECONDS}s per level after 1s warm-up, connections ${CONNECTIONS.join('/')}, database ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`);
  console.log('  each request: a unique Stripe-signed payment.succeeded; 200 only after registry row + receipt committed;');
  console.log('  group = one INSERT…CTE statement per batch of concurrent requests (the ingress); naive = BEGIN + 2 INSERTs + COMMIT');
  console.log('  per request; statement = the ingress statement once per request (no batching; PostgreSQL still shares WAL flushes)');
  console.log('  reconciliation workflow starts deferred to the sweep (not part of the ack path measured here)');
  const group = await measure('group');
  if (process.env.BENCH_ONLY_GROUP) return;
  const naive = await measure('naive');
  const statement = process.env.BENCH_SKIP_STATEMENT ? undefined : await measure('statement');

  console.log('\n| connections | group commit acks/s | p50 ms | p99 ms | naive acks/s | p50 ms | p99 ms | ratio | statement/request acks/s | p99 ms | ratio |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  group.results.forEach((g, i) => {
    const n = naive.results[i]!;
    const s = statement?.results[i];
    const third = s ? `${s.perSecond.toFixed(0)} | ${s.p99Ms.toFixed(1)} | ${(g.perSecond / s.perSecond).toFixed(2)}×` : '– | – | –';
    console.log(`| ${g.connections} | ${g.perSecond.toFixed(0)} | ${g.p50Ms.toFixed(1)} | ${g.p99Ms.toFixed(1)} | ${n.perSecond.toFixed(0)} | ${n.p50Ms.toFixed(1)} | ${n.p99Ms.toFixed(1)} | ${(g.perSecond / n.perSecond).toFixed(2)}× | ${third} |`);
  });
  const receiptsPerTxn = group.stats.receipts / Math.max(1, group.stats.transactions);
  console.log(`\ngroup commit: ${group.stats.receipts} receipts in ${group.stats.transactions} transactions (${receiptsPerTxn.toFixed(1)} per commit); naive: ${naive.stats.receipts} in ${naive.stats.transactions}`);
  const last = group.results.at(-1)!;
  const lastNaive = naive.results.at(-1)!;
  console.log(
    `at ${last.connections} connections: ratio ${(last.perSecond / lastNaive.perSecond).toFixed(2)}× (goal ≥ 2×), p99 ${last.p99Ms.toFixed(1)} ms (goal < 50 ms)`,
  );
  const failures = [...group.results, ...naive.results, ...(statement?.results ?? [])].reduce((sum, r) => sum + r.failed, 0);
  if (failures > 0) console.log(`WARNING: ${failures} non-200 answers`);
}
