// P3: the inbound drain. A burst of N signed webhooks through the real ingress (group commit + the ingress's
// reconciliation starter), the provider sandbox answering every payments-API query, the reconciliation worker with
// the shipped tuning and the sweep with the profile's interval and grace; sampled until every acknowledged webhook
// has its ledger posting. Used by bench/inbound-drain.ts and, as the competing load, by bench/lib/outbound-run.ts
// (--inbound-burst, P7).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import pLimit from 'p-limit';
import { parse as parseYaml } from 'yaml';
import { createActivities } from '../../src/activities/index.js';
import { createApp } from '../../src/api/app.js';
import { parseProfile, type Profile } from '../../src/config/profile.js';
import type { Database } from '../../src/db/client.js';
import { startInboundSweep } from '../../src/inbound/sweep.js';
import { createLogger } from '../../src/lib/logger.js';
import { createWorkers, runWorkers } from '../../src/temporal-workers/build.js';
import { startProviderSandbox } from '../../src/sandbox/provider.js';
import { ingressMetrics } from '../../src/metrics/inbound-ingress.js';
import type { WorkerOptions } from '@temporalio/worker';

export interface DrainOptions {
  database: Database;
  temporal: Client;
  native: NativeConnection;
  webhooks: number;
  /** Webhooks in flight from the sandbox at once. */
  senders?: number;
  /** The reconciliation worker's tuning (the shipped workerTuning + reconciliationTuning, given by the caller). */
  tuning: Partial<WorkerOptions>;
  /** Profile changes for this run (e.g. the reconciliation start rate). */
  inbound?: Record<string, unknown>;
  sampleMs?: number;
  timeoutMs?: number;
  log?: (line: string) => void;
  onSample?: (sample: DrainSample) => void;
}

export interface DrainSample {
  t: number;
  acked: number;
  started: number;
  posted: number;
}

export interface DrainResult {
  webhooks: number;
  acked: number;
  refused: number;
  /** From the first acknowledgement to the last acknowledgement. */
  ackSeconds: number;
  /** From the first acknowledgement to the last ledger posting (the drain). */
  drainSeconds: number;
  posted: number;
  /** Ledger transactions per provider object above one: must be 0. */
  postedTwice: number;
  /** Workflow start attempts in this run by who made them and what Temporal answered (already_started: a race). */
  starts: Record<string, number>;
  curve: DrainSample[];
  reconciliationsPerSecond: number;
}

const SECRET = 'whsec_drain_0123456789abcdef';

function drainProfile(provider: string, apiBaseUrl: string, inbound: Record<string, unknown>): Profile {
  process.env.DRAIN_WEBHOOK_SECRET ??= SECRET;
  process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_unused';
  process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'unused';
  const document = parseYaml(readFileSync(new URL('../../config/example.yaml', import.meta.url), 'utf8')) as {
    inbound: Record<string, unknown>;
  };
  Object.assign(document.inbound, inbound);
  // The burst is the point: the provider's A7 bucket must not refuse it.
  document.inbound.rate_limit = { per_second: 1_000_000, burst: 1_000_000 };
  document.inbound.receipt_queue_max = 100_000;
  document.inbound.providers = {
    [provider]: { scheme: 'stripe', secret_ref: 'env:DRAIN_WEBHOOK_SECRET', api_base_url: apiBaseUrl },
  };
  return parseProfile(document, 'inbound drain profile');
}

export interface InboundDrain {
  /** Resolves when every acknowledged webhook is posted (or the timeout passed). */
  done: Promise<DrainResult>;
  /** The latest sample. */
  current(): DrainSample;
  /** The run's private reconciliation task queue (to terminate what is left when the drain is cut short). */
  taskQueue: string;
}

/** Starts the burst and returns at once; `done` resolves with the figures. Cleans up after itself. */
export async function startInboundDrain(options: DrainOptions): Promise<InboundDrain> {
  const log = options.log ?? (() => {});
  const run = randomUUID().slice(0, 8);
  const provider = `drain-${run}`;
  const queue = `drain-reconcile-${run}`;
  const taskQueues = { delivery: queue, reconciliation: queue, smoke: queue };
  const logger = createLogger('bench-drain', process.env.LOG_LEVEL ?? 'warn');
  const { db, sql } = options.database;
  const cleanups: (() => Promise<unknown>)[] = [];

  const ingressProfile = drainProfile(provider, `http://127.0.0.1:9/${provider}`, options.inbound ?? {});
  const app = createApp({
    db,
    temporal: options.temporal,
    profile: ingressProfile,
    env: { ADMIN_TOKEN: `drain-${randomUUID()}`, SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') },
    taskQueues,
    logger,
    readiness: {},
  });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const sandbox = await startProviderSandbox({
    ingressUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    port: 0,
    providers: [{ name: provider, path: provider, scheme: 'stripe', secret: process.env.DRAIN_WEBHOOK_SECRET! }],
  });
  cleanups.push(() => sandbox.close());
  const workerProfile = drainProfile(provider, `${sandbox.url}/${provider}`, options.inbound ?? {});
  const workers = await createWorkers({
    connection: options.native,
    taskQueues,
    activities: createActivities({ db, profile: workerProfile, logger, secretsKey: Buffer.alloc(32, 1) }),
    tuning: options.tuning,
  });
  const running = runWorkers(workers);
  cleanups.push(async () => {
    for (const worker of workers) worker.shutdown();
    await running;
  });
  // The worker process's sweep as shipped (src/inbound/sweep.ts): the profile's interval, grace, start rate and
  // backlog gate (P3), 128 receipts per claim.
  const sweep = startInboundSweep({ db, temporal: options.temporal, profile: ingressProfile, logger, taskQueue: queue });
  cleanups.push(() => sweep.stop());

  const prefix = `drn_${run}_`;
  const references = Array.from({ length: options.webhooks }, (_, i) => `${prefix}${String(i).padStart(7, '0')}`);
  for (const [i, reference] of references.entries())
    sandbox.upsertPayment(provider, reference, { status: 'succeeded', amountMinor: 1000 + i, currency: 'EUR' });

  let acked = 0;
  let refused = 0;
  let firstAck = 0;
  let lastAck = 0;
  const sample = async (): Promise<DrainSample> => {
    const [row] = await sql<{ started: number; posted: number }[]>`
      select (select count(*)::int from webhook_receipts where provider = ${provider} and workflow_started_at is not null) as started,
             (select count(*)::int from ledger_transactions
               where payment_reference >= ${prefix} and payment_reference < ${prefix + '~'} and kind = 'payment') as posted`;
    return { t: firstAck ? (Date.now() - firstAck) / 1000 : 0, acked, started: row!.started, posted: row!.posted };
  };
  let latest: DrainSample = { t: 0, acked: 0, started: 0, posted: 0 };

  const startCounts = async () => {
    const counts: Record<string, number> = {};
    for (const v of (await ingressMetrics.workflowStarts.get()).values) counts[`${v.labels.via}:${v.labels.result}`] = v.value;
    return counts;
  };
  const startsBefore = await startCounts();
  const done = (async (): Promise<DrainResult> => {
    try {
      const limit = pLimit(options.senders ?? 64);
      const sending = Promise.all(
        references.map((reference) =>
          limit(async () => {
            const result = await sandbox.sendWebhook(provider, { type: 'payment.succeeded', reference });
            if (result.deliveries[0]?.status === 200) {
              acked += 1;
              lastAck = Date.now();
              firstAck ||= lastAck;
            } else refused += 1;
          }),
        ),
      );
      const curve: DrainSample[] = [];
      const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
      let sendingDone = false;
      void sending.then(() => (sendingDone = true));
      for (;;) {
        await new Promise((r) => setTimeout(r, options.sampleMs ?? 1_000));
        latest = await sample();
        curve.push(latest);
        options.onSample?.(latest);
        if (curve.length % 10 === 0)
          log(`  t=${latest.t.toFixed(0)}s acked ${latest.acked} started ${latest.started} posted ${latest.posted}`);
        if ((sendingDone && latest.posted >= acked) || Date.now() > deadline) break;
      }
      await sending;
      const [last] = await sql<{ at: number | null }[]>`
        select (extract(epoch from max(posted_at)) * 1000)::float8 as at from ledger_transactions
         where payment_reference >= ${prefix} and payment_reference < ${prefix + '~'} and kind = 'payment'`;
      const [twice] = await sql<{ n: number }[]>`
        select count(*)::int as n from (select payment_reference from ledger_transactions
          where payment_reference >= ${prefix} and payment_reference < ${prefix + '~'} and kind = 'payment'
          group by payment_reference having count(*) > 1) t`;
      const starts: Record<string, number> = {};
      for (const [key, value] of Object.entries(await startCounts())) {
        const delta = value - (startsBefore[key] ?? 0);
        if (delta > 0) starts[key] = delta;
      }
      const drainSeconds = ((last?.at ?? Date.now()) - firstAck) / 1000;
      return {
        webhooks: options.webhooks,
        acked,
        refused,
        ackSeconds: (lastAck - firstAck) / 1000,
        drainSeconds,
        posted: latest.posted,
        postedTwice: twice!.n,
        starts,
        curve,
        reconciliationsPerSecond: latest.posted / drainSeconds,
      };
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    }
  })();
  return { done, current: () => latest, taskQueue: queue };
}

/** The curve as a few lines: every `step`-th sample and the last. */
export function formatCurve(curve: DrainSample[], lines = 12): string[] {
  const step = Math.max(1, Math.ceil(curve.length / lines));
  const picked = curve.filter((_, i) => i % step === 0 || i === curve.length - 1);
  return picked.map(
    (s) =>
      `  t=${s.t.toFixed(1).padStart(7)} s  acked ${String(s.acked).padStart(6)}  started ${String(s.started).padStart(6)}  posted ${String(s.posted).padStart(6)}`,
  );
}
