// npm run bench:budget (P10): the physical budget of this box for the batched delivery path, measured the way the
// path uses it, --runs times (default 3), min / median / max (bench/lib/runs.ts):
//  - PostgreSQL commits per second: C connections each committing one-row INSERTs in a loop (PostgreSQL groups the
//    WAL flushes of concurrent commits), and rows per second when every commit carries a group of G rows in one
//    unnest INSERT (what the batched path does per chunk: reserve, then record);
//  - Node POSTs per second to a local merchant in a process of its own (bench/lib/budget-merchant.ts), with fetch over
//    an undici Agent at 128 in flight, as the batched sender does (src/outbound/exchange.ts), and with undici.request.
// Usage: npm run bench:budget -- [--runs 3] [--seconds 5] [--connections 1,8,32] [--group 128]
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { BENCH_DATABASE_URL, ensureBenchDatabase } from './lib/bench-db.js';
import { measurePosts, startBudgetMerchant } from './lib/post-budget.js';
import { recordProcessStats } from './lib/process-stats.js';
import { loadAverage, phaseLine, report, type Figure, type PhaseStats, type RunResult } from './lib/runs.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '1,8,32' },
    group: { type: 'string', default: '128' },
    'post-concurrency': { type: 'string', default: '128' },
  },
});
const RUNS = Number(args.runs);
const MS = Number(args.seconds) * 1000;
const CONNECTIONS = args.connections.split(',').map(Number);
const GROUP = Number(args.group);
const stats = recordProcessStats('bench (PostgreSQL client / poster)');

await ensureBenchDatabase();
const sql = postgres(BENCH_DATABASE_URL, { max: Math.max(...CONNECTIONS), onnotice: () => {} });
await sql`create table if not exists bench_budget (id bigserial primary key, delivery_id uuid not null, at timestamptz not null default now(), body text)`;

/** `connections` loops, each committing `rows` rows per statement (autocommit) until `MS` passed: commits/s, rows/s. */
async function commits(connections: number, rows: number) {
  const end = performance.now() + MS;
  let n = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const ids = Array.from({ length: rows }, () => crypto.randomUUID());
        await sql`insert into bench_budget (delivery_id, body) select unnest(${ids}::uuid[]), 'ok'`;
        n += 1;
      }
    }),
  );
  return { commitsPerSecond: n / (MS / 1000), rowsPerSecond: (n * rows) / (MS / 1000) };
}

const merchant = await startBudgetMerchant();
const posts = (concurrency: number, client: 'fetch' | 'request' = 'fetch') =>
  measurePosts(merchant.port, MS, concurrency, client);

const runs: RunResult[] = [];
for (let i = 1; i <= RUNS; i++) {
  const loadBefore = loadAverage();
  console.log(`run ${i}/${RUNS} — load average ${loadBefore}`);
  const figures: Figure[] = [];
  const phases: PhaseStats[] = [];
  for (const c of CONNECTIONS) {
    stats.reset();
    const one = await commits(c, 1);
    const grouped = await commits(c, GROUP);
    phases.push({ phase: `commits ${c} conns`, processes: [stats.snapshot()] });
    console.log(
      `  PostgreSQL ${c} conns: ${one.commitsPerSecond.toFixed(0)} one-row commits/s; ${grouped.commitsPerSecond.toFixed(0)} commits/s of ${GROUP} rows = ${grouped.rowsPerSecond.toFixed(0)} rows/s`,
    );
    figures.push(
      { name: `PostgreSQL ${c} conns: one-row commits/s`, value: Math.round(one.commitsPerSecond), unit: '/s' },
      { name: `PostgreSQL ${c} conns: ${GROUP}-row commits/s`, value: Math.round(grouped.commitsPerSecond), unit: '/s' },
      { name: `PostgreSQL ${c} conns: rows/s in ${GROUP}-row commits`, value: Math.round(grouped.rowsPerSecond), unit: '/s' },
    );
  }
  stats.reset();
  await merchant.stats();
  const perSecond = await posts(Number(args['post-concurrency']));
  phases.push({ phase: 'POSTs', processes: [stats.snapshot(), await merchant.stats()] });
  console.log(phaseLine('POSTs', phases.at(-1)!.processes));
  console.log(`  POSTs to a local merchant (fetch + undici, ${args['post-concurrency']} in flight): ${perSecond.toFixed(0)}/s`);
  figures.push({
    name: `POSTs/s to a local merchant, ${args['post-concurrency']} in flight`,
    value: Math.round(perSecond),
    unit: '/s',
  });
  stats.reset();
  const withRequest = await posts(Number(args['post-concurrency']), 'request');
  phases.push({ phase: 'POSTs (undici.request)', processes: [stats.snapshot(), await merchant.stats()] });
  console.log(`  the same with undici.request instead of fetch: ${withRequest.toFixed(0)}/s`);
  figures.push({
    name: `POSTs/s with undici.request, ${args['post-concurrency']} in flight`,
    value: Math.round(withRequest),
    unit: '/s',
  });
  runs.push({ figures, phases, loadBefore, loadAfter: loadAverage() });
  console.log(`run ${i}/${RUNS} done — load average ${loadAverage()}`);
}
await sql`drop table bench_budget`;
await sql.end();
merchant.stop();
console.log(report(`bench:budget ${process.argv.slice(2).join(' ')}`, runs));
process.exit(0);
