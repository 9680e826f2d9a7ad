// `npm run drill:provider-outage` (I14): the provider-outage drill of src/sandbox/outage-drill.ts at full size, on
// the benchmark database. A smaller run of the same code is test/integration/drill.test.ts.
// Env: DRILL_EVENTS (400), DRILL_LOAD_SECONDS (20), DRILL_OUTAGE_SECONDS (30), DRILL_TIMEOUT (15s),
// DRILL_CONCURRENCY (16), DRILL_SETTLE_SECONDS (300), BENCH_DATABASE_URL (apipay_bench), TEMPORAL_ADDRESS.
import { pathToFileURL } from 'node:url';
import { formatDrill, runProviderOutageDrill } from '../src/sandbox/outage-drill.js';
import { quietTemporalRuntime } from './lib/baseline.js';
import { ensureBenchDatabase } from './lib/bench-db.js';

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = process.env;
  quietTemporalRuntime();
  const result = await runProviderOutageDrill({
    databaseUrl: await ensureBenchDatabase(),
    temporalAddress: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    events: Number(env.DRILL_EVENTS ?? 400),
    loadMs: Number(env.DRILL_LOAD_SECONDS ?? 20) * 1000,
    outageMs: Number(env.DRILL_OUTAGE_SECONDS ?? 30) * 1000,
    reconciliationTimeout: env.DRILL_TIMEOUT ?? '15s',
    backoff: { initial: '500ms', multiplier: 2, maximum: '4s' },
    concurrency: Number(env.DRILL_CONCURRENCY ?? 16),
    duplicates: 1,
    settleMs: Number(env.DRILL_SETTLE_SECONDS ?? 300) * 1000,
  });
  console.log(formatDrill(result));
  const ok =
    result.lost === 0 &&
    result.unsettled === 0 &&
    result.appliedTwice === 0 &&
    result.acknowledged === result.sent &&
    result.applied + result.manualReview === result.acknowledged;
  console.log(ok ? 'drill passed: every webhook acknowledged, none lost, none applied twice' : 'drill FAILED');
  process.exit(ok ? 0 : 1);
}
