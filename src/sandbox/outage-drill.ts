// I14, the provider-outage drill: sustained signed webhook load through the real ingress while the provider's
// payments API is down for longer than the reconciliation timeout of the earliest events. Every webhook must be
// acknowledged, none lost, each applied at most once (exactly once for those reconciled after recovery), and the
// rest parked in manual_review. `npm run drill:provider-outage` (bench/provider-outage-drill.ts) runs it at full
// size; test/integration/drill.test.ts runs a smaller one. The caller installs the Temporal runtime it wants.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type WorkerOptions } from '@temporalio/worker';
import pLimit from 'p-limit';
import { parse as parseYaml } from 'yaml';
import { createActivities } from '../activities/index.js';
import { createApp } from '../api/app.js';
import { parseProfile, type Profile } from '../config/profile.js';
import { createDatabase } from '../db/client.js';
import { startSweepLoop } from '../inbound/sweep.js';
import { createLogger } from '../lib/logger.js';
import { createWorkers, runWorkers } from '../temporal-workers/build.js';
import { createProviderRegistry } from '../providers/index.js';
import { startProviderSandbox } from './provider.js';

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
  const document = parseYaml(readFileSync(new URL('../../config/example.yaml', import.meta.url), 'utf8')) as { inbound: Record<string, unknown> };
  document.inbound.reconciliation_timeout = options.reconciliationTimeout;
  document.inbound.provider_query_backoff = options.backoff;
  document.inbound.providers = { [provider]: { scheme: 'stripe', secret_ref: 'env:DRILL_WEBHOOK_SECRET', api_base_url: apiBaseUrl } };
  return parseProfile(document, 'drill profile');
}

/** Runs `task` over 0..count-1 with at most `concurrency` in flight. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  const limit = pLimit(Math.max(1, concurrency));
  await Promise.all(Array.from({ length: count }, (_, i) => limit(() => task(i))));
}

export async function runProviderOutageDrill(options: DrillOptions): Promise<DrillResult> {
  const log = options.log ?? ((line: string) => console.log(line));
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
    await pool(references.length, options.concurrency, async (i) => {
      const due = started + (i * options.loadMs) / references.length;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const result = await sandbox.sendWebhook(provider, { type: 'payment.succeeded', reference: references[i]! });
      const [first, ...again] = result.deliveries;
      if (first?.status === 200) acknowledged += 1;
      else refused.push(`${references[i]}: ${first?.status} ${first?.body}`);
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
    await pool(parked.length, 16, async (i) => {
      await temporal.workflow.getHandle(parked[i]!.id).terminate('provider-outage drill finished').catch(() => undefined);
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
