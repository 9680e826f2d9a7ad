// `npm run bench:retention -- [--rows 1000000] [--batch 1000] [--runs 3]` (O19): the retention sweep's rate over
// expired rows. Each run loads `--rows` events received 100 days ago (1 KiB bodies, one delivery and one attempt
// with an excerpt each) with generate_series, then times sweepRetention until none is left; prints each run's rows/s,
// the median, and the load average before and after. Env: BENCH_DATABASE_URL (default its own apipay_bench_retention).
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createDatabase } from '../src/db/client.js';
import { sweepRetention } from '../src/outbound/retention-sweep.js';
import { ensureBenchDatabase } from './lib/bench-db.js';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
  },
});
const ROWS = Number(args.rows);
const BATCH = Number(args.batch);
const RUNS = Number(args.runs);
const url = await ensureBenchDatabase(
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/apipay_bench_retention',
);
const database = createDatabase(url, { max: 4 });
const sql = database.sql;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

async function load1m(): Promise<void> {
  await sql`truncate delivery_attempts, deliveries, events, webhook_endpoints cascade`;
  await sql`insert into webhook_endpoints (id, merchant_account, url, event_types, livemode) values ('we_bench', 'acct_bench', 'https://example.invalid/h', '{*}', false)`;
  const chunk = 100_000;
  for (let from = 0; from < ROWS; from += chunk) {
    const to = Math.min(ROWS, from + chunk) - 1;
    await sql`
      insert into events (event_public_id, merchant_account, type, livemode, created_unix, body, received_at)
      select 'evt_b' || g, 'acct_bench', 'payment.succeeded', false, 1780000000, convert_to(repeat('x', 1024), 'UTF8'),
             now() - interval '100 days' - (g || ' seconds')::interval
        from generate_series(${from}::int, ${to}::int) g`;
    await sql`
      insert into deliveries (id, event_public_id, endpoint_id, merchant_account, status, attempt_count)
      select 'whd_b' || g, 'evt_b' || g, 'we_bench', 'acct_bench', 'DELIVERED', 1 from generate_series(${from}::int, ${to}::int) g`;
    await sql`
      insert into delivery_attempts (delivery_id, attempt_number, started_at, response_status, latency_ms, succeeded, response_excerpt)
      select 'whd_b' || g, 1, now() - interval '100 days', 200, 5, true, 'ok thanks' from generate_series(${from}::int, ${to}::int) g`;
  }
  await sql`vacuum analyze events`;
  await sql`vacuum analyze deliveries`;
  await sql`vacuum analyze delivery_attempts`;
}

const rates: number[] = [];
console.log(`bench:retention  rows=${ROWS} batch=${BATCH} runs=${RUNS}`);
for (let run = 1; run <= RUNS; run++) {
  await load1m();
  const before = load();
  const started = performance.now();
  const swept = await sweepRetention(database.db, { bodies: 90 * 86_400_000, sweep_batch: BATCH, sweep_interval: 600_000 });
  const seconds = (performance.now() - started) / 1000;
  const rate = swept / seconds;
  rates.push(rate);
  console.log(
    `run ${run}: swept ${swept} in ${seconds.toFixed(1)} s = ${Math.round(rate)} rows/s   load before ${before}, after ${load()}`,
  );
  if (swept !== ROWS) console.log(`  (expected ${ROWS})`);
}
rates.sort((a, b) => a - b);
console.log(`median: ${Math.round(rates[Math.floor(rates.length / 2)]!)} rows/s`);
await sql`truncate delivery_attempts, deliveries, events, webhook_endpoints cascade`;
await database.close();
