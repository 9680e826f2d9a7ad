// `npm run bench:ingress`: provider webhooks acknowledged per second with durable receipts, p50/p99 at several
// connection counts, for the real ingress (group commit) and, in the same run and database, a naive handler that
// commits one transaction per request (BEGIN, registry insert, receipt insert, COMMIT); prints the ratio. Workflow starts are deferred to the sweep.
// Env: BENCH_SECONDS (per level, default 5), BENCH_CONNECTIONS (default 16,64,256), BENCH_DATABASE_URL.
// `-- --rate R[,R2…] [--seconds S]` (P4): the open-loop SLO instead: the closed-loop peak at 256 connections, then R
// webhooks/s offered on a clock for S seconds (default 10), latency from each request's scheduled time, p50/p99/p99.9.
import { BENCH_DATABASE_URL, ensureBenchDatabase } from './lib/bench-db.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { stripePayload } from '../src/sandbox/payloads.js';
import { stripeSignatureHeader } from '../src/sandbox/signing.js';
import { runLoad, type LoadResult } from './lib/http-load.js';
import { runOpenLoop } from './lib/open-loop.js';

const BENCH_PROVIDER = 'bench-stripe';
const BENCH_SECRET = 'whsec_bench_0123456789abcdef';
const DATABASE_URL = BENCH_DATABASE_URL;
const { values: args } = parseArgs({ options: { rate: { type: 'string' }, seconds: { type: 'string' } } });
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

const run = randomUUID().slice(0, 8);
let sequence = 0;
function nextWebhook() {
  sequence += 1;
  const { body } = stripePayload({ id: `evt_bench_${run}_${sequence}`, type: 'payment.succeeded', reference: `pi_bench_${run}_${sequence}`, amountMinor: 1000 + (sequence % 500), currency: 'EUR' });
  return {
    path: `/webhooks/${BENCH_PROVIDER}`,
    headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignatureHeader(body, BENCH_SECRET, Math.floor(Date.now() / 1000)) },
    body,
  };
}

async function measure(mode: Mode): Promise<{ results: LoadResult[]; stats: { transactions: number; receipts: number } }> {
  const { url, child } = await startServer(mode);
  try {
    const results: LoadResult[] = [];
    for (const connections of CONNECTIONS) {
      const result = await runLoad({ url, connections, durationMs: SECONDS * 1000, warmupMs: 1000, next: nextWebhook });
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
    const peak = await runLoad({ url, connections: 256, durationMs: SECONDS * 1000, warmupMs: 1000, next: nextWebhook });
    console.log(`  closed 256 conns: ${peak.perSecond.toFixed(0)} acks/s  p50 ${peak.p50Ms.toFixed(1)} ms  p99 ${peak.p99Ms.toFixed(1)} ms  non-200 ${peak.failed}`);
    console.log(`  open loop: each rate offered on a clock for ${SECONDS}s after 1s warm-up; latency from the scheduled send time`);
    console.log('\n| offered /s | achieved /s | p50 ms | p99 ms | p99.9 ms | max ms | non-200 | max in flight | sender lag p99 ms |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const rate of rates) {
      const r = await runOpenLoop({ url, rate, durationMs: SECONDS * 1000, warmupMs: 1000, next: nextWebhook });
      console.log(`| ${rate} | ${r.achievedPerSecond.toFixed(0)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.p999Ms.toFixed(1)} | ${r.maxMs.toFixed(1)} | ${r.failed} | ${r.maxInFlight} | ${r.sendLagP99Ms.toFixed(1)} |`);
      if (rate === 3000) console.log(`  at 3000/s: p99 ${r.p99Ms.toFixed(1)} ms (goal ≤ 50 ms) ${r.p99Ms <= 50 ? 'met' : 'NOT met'}`);
    }
    console.log(`closed-loop peak at 256 connections: ${peak.perSecond.toFixed(0)} acks/s, p99 ${peak.p99Ms.toFixed(1)} ms`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

await ensureBenchDatabase(DATABASE_URL);
if (RATES) {
  await openLoop(RATES);
  process.exit(0);
}
console.log(`bench:ingress — ${SECONDS}s per level after 1s warm-up, connections ${CONNECTIONS.join('/')}, database ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`);
console.log('  each request: a unique Stripe-signed payment.succeeded; 200 only after registry row + receipt committed;');
console.log('  group = one INSERT…CTE statement per batch of concurrent requests (the ingress); naive = BEGIN + 2 INSERTs + COMMIT');
console.log('  per request; statement = the ingress statement once per request (no batching; PostgreSQL still shares WAL flushes)');
console.log('  reconciliation workflow starts deferred to the sweep (not part of the ack path measured here)');
const group = await measure('group');
if (process.env.BENCH_ONLY_GROUP) process.exit(0);
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
