// `npm run bench:inbound-drain -- [--webhooks 2000] [--senders 64] [--baseline 300]` (P3): a burst of N signed
// webhooks through the real ingress with the provider sandbox answering; prints the time from the first
// acknowledgement to the last ledger posting, the backlog curve (acked, started, posted over time) and the ratio of
// the reconciliation rate to the bare one-activity workflow rate measured in the same run (bench/lib/baseline.ts).
// The logic is in bench/lib/inbound-drain.ts. Env: BENCH_DATABASE_URL (apipay_bench), TEMPORAL_ADDRESS, WORKER_*.
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { parseEnv } from '../src/config/env.js';
import { createDatabase } from '../src/db/client.js';
import { reconciliationTuning, workerTuning } from '../src/temporal-workers/build.js';
import { measureBaselineRate, quietTemporalRuntime } from './lib/baseline.js';
import { ensureBenchDatabase } from './lib/bench-db.js';
import { formatCurve, startInboundDrain } from './lib/inbound-drain.js';

const { values: args } = parseArgs({
  options: {
    webhooks: { type: 'string', default: '2000' },
    senders: { type: 'string', default: '64' },
    baseline: { type: 'string', default: '300' },
    'start-rate': { type: 'string' }, // inbound.reconciliation_start_rate for this run (0 = unlimited)
    'backlog-max': { type: 'string' }, // inbound.reconciliation_backlog_max for this run (0 = no gate; P3)
    'json-samples': { type: 'boolean', default: false }, // one `sample {…}` line per sample (bench:outbound --inbound-burst reads them)
  },
});
const WEBHOOKS = Number(args.webhooks);
if (!(WEBHOOKS > 0)) {
  console.error(`bench:inbound-drain: --webhooks must be a positive number (got ${args.webhooks})`);
  process.exit(2);
}
quietTemporalRuntime();
const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const shipped = parseEnv({
  ADMIN_TOKEN: 'bench-admin-token-unused',
  SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  ...process.env,
});
const database = createDatabase(await ensureBenchDatabase(), { max: 20 });
const native = await NativeConnection.connect({ address });
const temporal = new Client({ connection: native });
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const loadBefore = load();
console.log(`bench:inbound-drain: ${WEBHOOKS} webhooks, load average ${loadBefore}, ${new Date().toISOString()}`);
const drain = await startInboundDrain({
  database,
  temporal,
  native,
  webhooks: WEBHOOKS,
  senders: Number(args.senders),
  tuning: { ...workerTuning(shipped), ...reconciliationTuning(shipped) }, // as src/workers/worker.ts's reconciliation worker
  inbound: {
    ...(args['start-rate'] === undefined ? {} : { reconciliation_start_rate: Number(args['start-rate']) }),
    ...(args['backlog-max'] === undefined ? {} : { reconciliation_backlog_max: Number(args['backlog-max']) }),
  },
  log: (line) => console.log(line),
  ...(args['json-samples'] ? { onSample: (sample) => console.log(`sample ${JSON.stringify(sample)}`) } : {}),
});
if (args['json-samples']) console.log(`queue ${drain.taskQueue}`);
const result = await drain.done;
const baseline =
  Number(args.baseline) > 0 ? await measureBaselineRate({ count: Number(args.baseline), concurrency: 32, address }) : null;
console.log(
  `bench:inbound-drain (shipped reconciliation worker tuning: ${shipped.WORKER_RECONCILIATION_WORKFLOW_TASKS} workflow tasks, ${shipped.WORKER_RECONCILIATION_ACTIVITIES} activities, cache ${shipped.WORKER_MAX_CACHED_WORKFLOWS}; backlog gate ${args['backlog-max'] ?? 'as the profile'})`,
);
console.log(
  `  acked     ${result.acked}/${result.webhooks} in ${result.ackSeconds.toFixed(1)} s (${(result.acked / Math.max(result.ackSeconds, 0.001)).toFixed(0)}/s), ${result.refused} refused`,
);
console.log(
  `  drain     first ack → last ledger posting ${result.drainSeconds.toFixed(1)} s: ${result.reconciliationsPerSecond.toFixed(1)} reconciliations/s; posted ${result.posted}, posted twice ${result.postedTwice}`,
);
console.log(
  `  starts    ${Object.entries(result.starts)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ')}`,
);
console.log('  curve');
for (const line of formatCurve(result.curve)) console.log(line);
if (baseline) {
  const ratio = (result.reconciliationsPerSecond / baseline.workflowsPerSecond) * 100;
  console.log(
    `  baseline  ${baseline.count} one-activity workflows, concurrency ${baseline.concurrency}: ${baseline.workflowsPerSecond.toFixed(1)} workflows/s`,
  );
  console.log(`  ratio     reconciliations/s ÷ bare workflows/s = ${ratio.toFixed(0)} % (goal ≥ 70 %)`);
}
console.log(`  load      average before ${loadBefore}, after ${load()}`);
await native.close();
await database.close();
process.exit(result.posted >= result.acked && result.postedTwice === 0 ? 0 : 1);
