// `npm run drill:provider-outage` (I14): sustained signed webhook load through the real ingress while the provider's
// payments API is down for longer than the reconciliation timeout of the earliest events. Every webhook must be
// acknowledged, none lost, each applied at most once (exactly once for those reconciled after recovery), and the
// rest parked in manual_review. A smaller run of the same code is test/integration/drill.test.ts.
// Env: DRILL_EVENTS (400), DRILL_LOAD_SECONDS (20), DRILL_OUTAGE_SECONDS (30), DRILL_TIMEOUT (15s),
// DRILL_CONCURRENCY (16), DRILL_SETTLE_SECONDS (300), BENCH_DATABASE_URL (apipay_bench), TEMPORAL_ADDRESS.
import { ensureBenchDatabase } from './lib/bench-db.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { parse as parseYaml } from 'yaml';
import { createActivities } from '../src/activities/index.js';
import { createApp } from '../src/api/app.js';
import { parseProfile, type Profile } from '../src/config/profile.js';
import { createDatabase } from '../src/db/client.js';
import { startSweepLoop } from '../src/inbound/sweep.js';
import { createLogger } from '../src/lib/logger.js';
import { createWorkers, runWorkers } from '../src/lib/workers.js';
import { createProviderRegistry } from '../src/providers/index.js';
import { startProviderSandbox } from '../src/sandbox/provider.js';
import pLimit from 'p-limit';
import { quietTemporalRuntime } from './lib/baseline.js';

export interface DrillOptions {
  databaseUrl: string;
  temporalAddress: string;
  events: number;
  loadMs: number;
  outageMs: number;
  /** Profile durations: "4s", "20s". */
  reconciliationTimeout: string;
  backoff: { initial: string; multiplier: number; maximum: string };
  concurrency: number;
  /** Extra deliveries of every webhook (providers deliver at least once): must change nothing. */
  duplicates: number;
  settleMs: number;
  workflowBundle?: WorkerOptions['workflowBundle'];
  log?: (line: string) => void;
}

export interface DrillResult {
  sent: number;
  acknowledged: number;
  duplicateAcks: number;
  /** Acknowledged but missing from the registry or never started as a workflow: must be 0. */
  lost: number;
  /** Still received/reconciling when the settle time ran out (a slow machine, not a loss): must be 0 to pass. */
  unsettled: number;
  applied: number;
  appliedTwice: number;
  manualReview: number;
  rejected: number;
  otherStates: number;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  providerApiErrors: number;
  seconds: number;
}

const SECRET = 'whsec_drill_0123456789abcdef';

function drillProfile(provider: string, options: DrillOptions, apiBaseUrl: string): Profile {
  process.env.DRILL_WEBHOOK_SECRET ??= SECRET;
  process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_unused';
  process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'unused';
  const document = parseYaml(readFileSync(new URL('../config/example.yaml', import.meta.url), 'utf8')) as { inbound: Record<string, unknown> };
  document.inbound.reconciliation_timeout = options.reconciliationTimeout;
  document.inbound.provider_query_backoff = options.backoff;
  document.inbound.providers = { [provider]: { scheme: 'stripe', secret_ref: 'env:DRILL_WEBHOOK_SECRET', api_base_url: apiBaseUrl } };
  return parseProfile(document, 'drill profile');
}

export async function runProviderOutageDrill(options: DrillOptions): Promise<DrillResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  quietTemporalRuntime();
  const run = randomUUID().slice(0, 8);
  const provider = `drill-${run}`;
  const queue = `drill-reconcile-${run}`;
  const taskQueues = { delivery: queue, reconciliation: queue, smoke: queue };
  const logger = createLogger('drill', process.env.LOG_LEVEL ?? 'warn');
  const database = createDatabase(options.databaseUrl, { max: 16 });
  const connection = await Connection.connect({ address: options.temporalAddress });
  const native = await NativeConnection.connect({ address: options.temporalAddress });
  const temporal = new Client({ connection });
  const cleanups: (() => Promise<unknown>)[] = [];

  try {
    // The API first (the sandbox needs its URL), then the sandbox, then the worker that queries the sandbox.
    const ingressProfile = drillProfile(provider, options, `http://127.0.0.1:9/${provider}`);
    const app = createApp({
      db: database.db,
      temporal,
      profile: ingressProfile,
      env: { ADMIN_TOKEN: `drill-${randomUUID()}`, SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') },
      taskQueues,
      logger,
      readiness: {},
    });
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const ingressUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const sandbox = await startProviderSandbox({
      ingressUrl,
      port: 0,
      providers: [{ name: provider, path: provider, scheme: 'stripe', secret: process.env.DRILL_WEBHOOK_SECRET! }],
      switches: { outage: true, duplicates: options.duplicates },
    });
    cleanups.push(() => sandbox.close());
    const workerProfile = drillProfile(provider, options, `${sandbox.url}/${provider}`);
    const workers = await createWorkers({
      connection: native,
      taskQueues,
      activities: createActivities({ db: database.db, profile: workerProfile, logger, secretsKey: Buffer.alloc(32, 1) }),
      ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
    });
    const running = runWorkers(workers);
    cleanups.push(async () => {
      for (const worker of workers) worker.shutdown();
      await running;
    });
    // I6's safety net runs as in the worker process, in case a start after a 200 fails under load.
    const sweep = startSweepLoop({
      db: database.db,
      temporal,
      profile: ingressProfile,
      taskQueue: queue,
      providers: createProviderRegistry(ingressProfile.inbound.providers),
      olderThanMs: 2_000,
      intervalMs: 1_000,
      limit: 500,
      logger,
    });
    cleanups.push(() => sweep.stop());

    const references = Array.from({ length: options.events }, (_, i) => `drill_${run}_${String(i).padStart(6, '0')}`);
    for (const [i, reference] of references.entries()) {
      sandbox.upsertPayment(provider, reference, { status: 'succeeded', amountMinor: 1000 + i, currency: 'EUR' });
    }

    log(`drill ${run}: ${options.events} events over ${options.loadMs / 1000}s, provider API down for ${options.outageMs / 1000}s, reconciliation_timeout ${options.reconciliationTimeout}, ${options.duplicates} duplicate(s) per webhook`);
    const started = Date.now();
    const recovery = setTimeout(() => {
      sandbox.setSwitches({ outage: false });
      log(`drill ${run}: provider API back after ${((Date.now() - started) / 1000).toFixed(1)}s`);
    }, options.outageMs);
    cleanups.push(async () => clearTimeout(recovery));

    let acknowledged = 0;
    let duplicateAcks = 0;
    const refused: string[] = [];
    await pLimit(options.concurrency).map(references, async (reference, i) => {
      const due = started + (i * options.loadMs) / references.length;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const result = await sandbox.sendWebhook(provider, { type: 'payment.succeeded', reference });
      const [first, ...again] = result.deliveries;
      if (first?.status === 200) acknowledged += 1;
      else refused.push(`${reference}: ${first?.status} ${first?.body}`);
      duplicateAcks += again.filter((d) => d.status === 200).length;
    });
    log(`drill ${run}: load done in ${((Date.now() - started) / 1000).toFixed(1)}s: ${acknowledged} acknowledged, ${refused.length} refused`);

    // Settled: every acknowledged event is applied, rejected or waiting for an operator.
    const like = `drill_${run}_%`;
    const settleDeadline = Date.now() + options.settleMs;
    let settled = 0;
    for (;;) {
      const [row] = await database.sql<{ n: number }[]>`
        select count(*)::int as n from reconciliations
         where provider = ${provider} and payment_reference like ${like} and state in ('applied', 'rejected', 'manual_review')`;
      settled = row!.n;
      if (settled >= acknowledged || Date.now() > settleDeadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }

    const states = await database.sql<{ state: string; n: number }[]>`
      select state, count(*)::int as n from reconciliations where provider = ${provider} and payment_reference like ${like} group by state`;
    const count = (state: string) => states.find((s) => s.state === state)?.n ?? 0;
    const [twice] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from (select payment_reference from ledger_transactions
        where payment_reference like ${like} and kind = 'payment' group by payment_reference having count(*) > 1) t`;
    const [lag] = await database.sql<{ p50: number | null; p99: number | null }[]>`
      select percentile_cont(0.5) within group (order by extract(epoch from l.posted_at - r.acknowledged_at) * 1000) as p50,
             percentile_cont(0.99) within group (order by extract(epoch from l.posted_at - r.acknowledged_at) * 1000) as p99
        from reconciliations r join ledger_transactions l on l.id = r.ledger_transaction_id
       where r.provider = ${provider} and r.payment_reference like ${like}`;
    const [registered] = await database.sql<{ n: number }[]>`select count(*)::int as n from provider_event_registry where provider = ${provider}`;
    const [startedRows] = await database.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_receipts where provider = ${provider} and workflow_started_at is not null`;
    const applied = count('applied');
    const manualReview = count('manual_review');
    const rejected = count('rejected');
    const result: DrillResult = {
      sent: references.length,
      acknowledged,
      duplicateAcks,
      lost: Math.max(0, acknowledged - Math.min(registered!.n, startedRows!.n)),
      unsettled: Math.max(0, acknowledged - settled),
      applied,
      appliedTwice: twice!.n,
      manualReview,
      rejected,
      otherStates: states.reduce((s, r) => s + r.n, 0) - applied - manualReview - rejected,
      lagP50Ms: lag?.p50 === null || lag?.p50 === undefined ? null : Math.round(Number(lag.p50)),
      lagP99Ms: lag?.p99 === null || lag?.p99 === undefined ? null : Math.round(Number(lag.p99)),
      providerApiErrors: sandbox.stats.apiErrors,
      seconds: (Date.now() - started) / 1000,
    };

    // The parked workflows run on this drill's private task queue, which nobody polls after it: end them.
    const parked = await database.sql<{ id: string }[]>`
      select id from reconciliations where provider = ${provider} and payment_reference like ${like} and state <> 'applied' and state <> 'rejected'`;
    await pLimit(16).map(parked, async ({ id }) => {
      await temporal.workflow.getHandle(id).terminate('provider-outage drill finished').catch(() => undefined);
    });
    return result;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    await native.close();
    await connection.close();
    await database.close();
  }
}

export function formatDrill(result: DrillResult): string {
  const ms = (v: number | null) => (v === null ? 'n/a' : `${v} ms`);
  return [
    `webhooks sent           ${result.sent}`,
    `acknowledged (200)      ${result.acknowledged}   (+${result.duplicateAcks} duplicate deliveries acknowledged, changing nothing)`,
    `lost                    ${result.lost}`,
    `still reconciling       ${result.unsettled}`,
    `applied exactly once    ${result.applied}   (applied twice: ${result.appliedTwice})`,
    `in manual_review        ${result.manualReview}`,
    `rejected / other        ${result.rejected} / ${result.otherStates}`,
    `ack → ledger lag        p50 ${ms(result.lagP50Ms)}, p99 ${ms(result.lagP99Ms)}`,
    `provider API 503s       ${result.providerApiErrors}`,
    `wall time               ${result.seconds.toFixed(1)} s`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = process.env;
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
