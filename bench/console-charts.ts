// `npm run bench:charts -- [--attempts 10000000] [--runs 5] [--explain]` (C12, C13): the console's and portal's
// chart queries on a cache miss, at `--attempts` delivery attempts. Loads (once; kept between runs) 1,000 endpoints
// of 100 merchants, attempts/5 deliveries of which a tenth go to one hot endpoint, five attempts each spread over 30
// days (2xx, 4xx, 5xx, timeouts), 1 % of the deliveries RETRYING, 500,000 reconciliations (80 % posted to the
// ledger) and 8 days of backlog samples, all with generate_series (triggers off for the load only). Then times each
// query function as a page's cache miss calls it (first run and median of `--runs`) and, with --explain, prints
// each statement's EXPLAIN (ANALYZE, BUFFERS). Env: BENCH_DATABASE_URL (default its own apipay_bench_charts).
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { sql as q, type SQL } from 'drizzle-orm';
import { createChartServices } from '../src/api/console/charts/services.js';
import { createDatabase, type Db } from '../src/db/client.js';
import { backlogHistory } from '../src/inbound/backlog-history.js';
import { ackToLedgerLag } from '../src/inbound/charts.js';
import { postingsByKind } from '../src/ledger/charts.js';
import { attemptSeries, failureGroups, successSparklines, waitingDeliveries } from '../src/outbound/charts.js';
import { chartWindow } from '../src/shared/chart-window.js';
import { ensureBenchDatabase } from './lib/bench-db.js';

const { values: args } = parseArgs({
  options: {
    attempts: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '5' },
    explain: { type: 'boolean', default: false },
  },
});
const ATTEMPTS = Number(args.attempts);
const DELIVERIES = Math.ceil(ATTEMPTS / 5);
const RUNS = Number(args.runs);
const url = await ensureBenchDatabase(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/apipay_bench_charts');
const database = createDatabase(url, { max: 2, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 }); // the load is one long transaction
const sql = database.sql;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

async function loadData(): Promise<void> {
  const [{ n } = { n: '0' }] = await sql<
    { n: string }[]
  >`select count(*)::text as n from delivery_attempts where delivery_id like 'whd_cb%'`;
  if (Number(n) >= ATTEMPTS) return console.log(`data: ${n} attempts already loaded`);
  const started = performance.now();
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`; // no FK, balance, append-only or fill triggers while loading
    await tx`truncate delivery_attempts, deliveries, events, webhook_endpoints, ledger_entries, ledger_transactions, reconciliations, backlog_samples cascade`;
    await tx`insert into webhook_endpoints (id, merchant_account, url, event_types, livemode)
      select 'we_cb' || g, 'acct_cb' || (g / 10), 'https://example.invalid/' || g, '{*}', false from generate_series(0, 999) g`;
    const chunk = 500_000;
    for (let from = 0; from < DELIVERIES; from += chunk) {
      const to = Math.min(DELIVERIES, from + chunk) - 1;
      await tx`insert into events (event_public_id, merchant_account, type, livemode, created_unix, body, received_at)
        select 'evt_cb' || g, 'acct_cb' || ((case when g % 10 = 0 then 0 else 1 + g % 999 end) / 10), 'payment.succeeded', false, 1780000000,
               convert_to('{}', 'UTF8'), now() - (g::float8 / ${DELIVERIES} * interval '30 days')
          from generate_series(${from}::int, ${to}::int) g`;
      await tx`insert into deliveries (id, event_public_id, endpoint_id, merchant_account, status, attempt_count, next_attempt_at, created_at)
        select 'whd_cb' || g, 'evt_cb' || g, 'we_cb' || e, 'acct_cb' || (e / 10),
               (case when g % 100 = 7 then 'RETRYING' else 'DELIVERED' end)::delivery_status, 5,
               case when g % 100 = 7 then now() + (g % 600) * interval '1 minute' end,
               now() - (g::float8 / ${DELIVERIES} * interval '30 days')
          from (select g, case when g % 10 = 0 then 0 else 1 + g % 999 end as e from generate_series(${from}::int, ${to}::int) g) t`;
      await tx`insert into delivery_attempts (delivery_id, endpoint_id, attempt_number, started_at, response_status, latency_ms, succeeded, error_kind)
        select 'whd_cb' || g, 'we_cb' || e, n, now() - (g::float8 / ${DELIVERIES} * interval '30 days') + n * interval '1 minute',
               case o when 0 then 200 when 1 then 503 when 2 then 404 else null end,
               (random() * 800)::int, o = 0,
               case o when 0 then null when 1 then 'server_error' when 2 then 'client_error' else 'timeout' end
          from (select g, n, case when g % 10 = 0 then 0 else 1 + g % 999 end as e,
                       case when (g + n) % 10 < 7 then 0 when (g + n) % 10 < 9 then 1 when (g + n) % 20 = 9 then 2 else 3 end as o
                  from generate_series(${from}::int, ${to}::int) g, generate_series(1, 5) n) t`;
      console.log(
        `  ${Math.min(DELIVERIES, to + 1)} deliveries, ${(Math.min(DELIVERIES, to + 1) * 5).toLocaleString()} attempts (${((performance.now() - started) / 1000).toFixed(0)} s, load ${load()})`,
      );
    }
    await tx`insert into ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at, posted_at)
      select 'ltx_cb' || g, 'k' || g, 'x', (array['payment', 'payment', 'payment', 'refund', 'chargeback'])[1 + g % 5], 'pi_' || g,
             now() - (g::float8 / 400000 * interval '30 days'), now() - (g::float8 / 400000 * interval '30 days') + (g % 30) * interval '1 second'
        from generate_series(0, 399999) g`;
    await tx`insert into ledger_entries (transaction_id, account, amount_minor, currency)
      select 'ltx_cb' || g, a, case a when 'cash' then 100 else -100 end, (array['EUR', 'USD', 'GBP'])[1 + g % 3]
        from generate_series(0, 399999) g, unnest(array['cash', 'revenue']) a`;
    await tx`insert into reconciliations (id, provider, provider_event_id, event_type, payment_reference, amount_minor, currency, effective_at, state, acknowledged_at, ledger_transaction_id)
      select 'reconcile:cb:' || g, 'cb', 'evt_' || g, 'payment.succeeded', 'pi_' || g, 100, 'EUR', now(),
             case when g < 400000 then 'applied' else 'manual_review' end,
             now() - ((case when g < 400000 then g else g - 400000 end)::float8 / 400000 * interval '30 days'),
             case when g < 400000 then 'ltx_cb' || g end
        from generate_series(0, 499999) g`;
    await tx`insert into backlog_samples
      select date_trunc('minute', now()) - g * interval '1 minute', 100 + g % 50, 60 + g % 300, 20 + g % 30, 600 + g % 900, 5 + g % 7, 300 + g % 600, g % 3, g % 60
        from generate_series(0, 8 * 1440 - 1) g`;
  });
  for (const t of [
    'events',
    'deliveries',
    'delivery_attempts',
    'ledger_transactions',
    'ledger_entries',
    'reconciliations',
    'backlog_samples',
  ])
    await sql.unsafe(`vacuum analyze ${t}`);
  console.log(`data: loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** The Db the query functions get: with --explain, each statement is also run under EXPLAIN (ANALYZE, BUFFERS). */
function explaining(db: Db, plans: string[]): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'execute') return Reflect.get(target, prop, receiver);
      return async (query: SQL) => {
        const rows = await target.execute<{ 'QUERY PLAN': string }>(q`explain (analyze, buffers) ${query}`);
        plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
        return target.execute(query);
      };
    },
  });
}

await loadData();
const [{ n: total } = { n: '0' }] = await sql<{ n: string }[]>`select count(*)::text as n from delivery_attempts`;
const [{ n: hot } = { n: '0' }] = await sql<
  { n: string }[]
>`select count(*)::text as n from delivery_attempts where endpoint_id = 'we_cb0'`;
const db = database.db;
const now = new Date();
const merchantEndpoints = Array.from({ length: 10 }, (_, i) => `we_cb${10 + i}`);
const cases: [string, (d: Db) => Promise<unknown>][] = [
  ['attempts, hot endpoint, last hour', (d) => attemptSeries(d, 'we_cb0', chartWindow('1h', now))],
  ['attempts, hot endpoint, 24 h', (d) => attemptSeries(d, 'we_cb0', chartWindow('24h', now))],
  ['attempts, hot endpoint, 7 days', (d) => attemptSeries(d, 'we_cb0', chartWindow('7d', now))],
  ['attempts, typical endpoint, 7 days', (d) => attemptSeries(d, 'we_cb17', chartWindow('7d', now))],
  ['portal sparklines, 10 endpoints, 24 h', (d) => successSparklines(d, merchantEndpoints, chartWindow('24h', now))],
  [
    'portal failures by answer, 10 endpoints, 24 h',
    (d) => failureGroups(d, merchantEndpoints, new Date(now.getTime() - 86_400_000)),
  ],
  ['portal waiting deliveries, one merchant', (d) => waitingDeliveries(d, 'acct_cb1')],
  ['backlog history, 7 days', (d) => backlogHistory(d, chartWindow('7d', now))],
  ['ack → ledger lag, 24 h', (d) => ackToLedgerLag(d, chartWindow('24h', now))],
  ['ack → ledger lag, 7 days', (d) => ackToLedgerLag(d, chartWindow('7d', now))],
  ['ledger postings by kind and currency, 30 days (one query)', (d) => postingsByKind(d, chartWindow('30d', now))],
];
// The page's path for the postings: closed days are read once per process, later misses read the open day only.
let clock = now.getTime();
const charts = createChartServices(db, () => new Date(clock));
const postingsMiss = async () => {
  clock += 60_000; // a new minute: the per-minute cache misses
  return charts.postings('30d');
};

console.log(`\nbench:charts  attempts=${total} (hot endpoint ${hot}) runs=${RUNS} load ${load()}\n`);
console.log('| query (cache miss) | first ms | median ms | max ms |');
console.log('|---|---:|---:|---:|');
const plans: [string, string[]][] = [];
for (const [name, run] of cases) {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run(db);
    times.push(performance.now() - t);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `| ${name} | ${times[0]!.toFixed(1)} | ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} | ${sorted.at(-1)!.toFixed(1)} |`,
  );
  if (args.explain) {
    const p: string[] = [];
    await run(explaining(db, p));
    plans.push([name, p]);
  }
}
{
  const t = performance.now();
  await postingsMiss();
  const first = performance.now() - t;
  const later: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    await postingsMiss();
    later.push(performance.now() - s);
  }
  later.sort((a, b) => a - b);
  console.log(`| ledger postings, 30 days, page path: a process's first miss | ${first.toFixed(1)} | | |`);
  console.log(
    `| ledger postings, 30 days, page path: a later minute's miss | ${later[0]!.toFixed(1)} | ${later[Math.floor(later.length / 2)]!.toFixed(1)} | ${later.at(-1)!.toFixed(1)} |`,
  );
}
console.log(`\nload after: ${load()}`);
for (const [name, p] of plans) console.log(`\n### ${name}\n${p.join('\n---\n')}`);
await database.close();
