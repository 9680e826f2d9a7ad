// I6 never lost: a receipt committed and acknowledged whose workflow was never started (the process died between
// the 200 and the start) is started by the durable sweep, from the stored raw bytes, exactly once.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/app.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { createReconciliationStarter } from '../../src/inbound/reconciliation-starter.js';
import { sweepUnstartedReceipts, startSweepLoop } from '../../src/inbound/sweep.js';
import { createProviderRegistry } from '../../src/providers/index.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { hmacPayload, hmacRequest, inboundTestProfile, reconciliationOf, runsOf, storedFor, stripeEvent, stripeRequest, terminateAll, uniqueReference } from '../helpers/inbound.js';
import { connectDevServer, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
const started = new Set<string>();
const { profile, stripe, hmac } = inboundTestProfile('swp');
// Only this file's providers: the sweep never touches another test's receipts.
const providers = createProviderRegistry({ [stripe]: profile.inbound.providers[stripe]!, [hmac]: profile.inbound.providers[hmac]! });
const taskQueues = uniqueTaskQueues('sweep');

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
});
afterAll(async () => {
  await terminateAll(temporal.client, started);
  await temporal.close();
  await database.close();
});

/** The ingress as it is when the process is killed right after the commit: no starter runs. */
function crashingIngress() {
  return testApp({
    db: database.db,
    temporal: temporal.client,
    profile,
    taskQueues,
    ingress: { starter: null },
  });
}

/** A starter of one start at a time with `maxWaitMs` and the start budget `rate`, given `receipts` at once. */
function boundedStarter(receipts: { receiptId: number; body: string }[], maxWaitMs: number, rate: { acquire(): Promise<void> }) {
  const starter = createReconciliationStarter({
    db: database.db,
    temporal: temporal.client,
    profile,
    taskQueue: taskQueues.reconciliation,
    logger: testLogger,
    concurrency: 1,
    maxWaitMs,
    rate,
  });
  const provider = providers.get(stripe)!;
  for (const r of receipts)
    starter.enqueue(r.receiptId, { provider: stripe, receiptId: r.receiptId, event: provider.extract(Buffer.from(r.body)), acknowledgedAt: new Date().toISOString() });
  return starter;
}

/** A start budget that lets the first start go at once and holds each later one `ms`. */
function heldAfterFirst(ms: number) {
  let first = true;
  return { acquire: () => (first ? ((first = false), Promise.resolve()) : new Promise<void>((r) => setTimeout(r, ms))) };
}

const sweep = (olderThanMs = 0) =>
  sweepUnstartedReceipts({ db: database.db, temporal: temporal.client, profile, taskQueue: taskQueues.reconciliation, providers, olderThanMs, limit: 100, logger: testLogger });

describe('I6 the sweep starts what the ingress never did', () => {
  it('I6 an acknowledged receipt without a workflow gets exactly one, with the right id and input, and is marked started', async () => {
    const app = crashingIngress();
    const reference = uniqueReference();
    const a = stripeEvent({ reference, amountMinor: 777, currency: 'EUR' });
    const b = hmacPayload({ type: 'refund.succeeded', reference, amountMinor: 100, currency: 'EUR' });
    expect((await app.request(`/webhooks/${stripe}`, stripeRequest(a.body))).status).toBe(200);
    expect((await app.request(`/webhooks/${hmac}`, hmacRequest(b.body))).status).toBe(200);
    for (const [p, id] of [[stripe, a.id], [hmac, b.id]] as const) started.add(reconciliationWorkflowId(p, id));

    // The "kill": acknowledged, durable, but nothing in Temporal.
    expect(await reconciliationOf(temporal.client, stripe, a.id)).toBeNull();
    const receipt = (await storedFor(database.db, stripe, a.id)).receipt!;
    expect(receipt.workflow_started_at).toBeNull();

    // Younger than the grace: left for the ingress.
    expect((await sweep(60_000)).found).toBe(0);

    const result = await sweep();
    expect(result).toEqual({ found: 2, started: 2, alreadyStarted: 0, failed: 0 });
    const workflow = await reconciliationOf(temporal.client, stripe, a.id);
    expect(workflow?.description.workflowId).toBe(`reconcile:${stripe}:${a.id}`);
    expect(workflow?.description.taskQueue).toBe(taskQueues.reconciliation);
    expect(workflow?.input).toMatchObject({
      provider: stripe,
      receiptId: Number(receipt.id),
      event: { providerEventId: a.id, type: 'payment.succeeded', paymentReference: reference, amountMinor: '777', currency: 'EUR' },
    });
    expect((await reconciliationOf(temporal.client, hmac, b.id))?.input).toMatchObject({ event: { type: 'refund.succeeded', amountMinor: '100' } });
    expect((await storedFor(database.db, stripe, a.id)).receipt!.workflow_started_at).not.toBeNull();

    // A second sweep finds nothing: marked rows are done.
    expect((await sweep()).found).toBe(0);
  });

  it('I6 the API process SIGKILLed after its 200 and before the workflow start: the sweep reconciles the receipt', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('../helpers/ingress-process.ts', import.meta.url).pathname], {
      env: { ...process.env, INGRESS_PROVIDER: stripe, INGRESS_TASK_QUEUE: taskQueues.reconciliation },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.once('exit', () => reject(new Error('ingress process exited before it was ready')));
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line.startsWith('{"ready"')) resolve((JSON.parse(line) as { ready: number }).ready);
        });
      });
      const { id, body } = stripeEvent({ amountMinor: 4321 });
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/${stripe}`, stripeRequest(body));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ received: true, duplicate: false });
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      started.add(reconciliationWorkflowId(stripe, id));

      expect(await reconciliationOf(temporal.client, stripe, id)).toBeNull();
      expect((await storedFor(database.db, stripe, id)).receipt!.workflow_started_at).toBeNull();
      const result = await sweep();
      expect(result.started).toBeGreaterThanOrEqual(1);
      const workflow = await reconciliationOf(temporal.client, stripe, id);
      expect(workflow?.input).toMatchObject({ provider: stripe, event: { providerEventId: id, amountMinor: '4321' } });
      expect((await storedFor(database.db, stripe, id)).receipt!.workflow_started_at).not.toBeNull();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('I6 a receipt whose workflow exists but was never marked (crash after the start) is marked, not started twice', async () => {
    const app = crashingIngress();
    const { id, body } = stripeEvent();
    expect((await app.request(`/webhooks/${stripe}`, stripeRequest(body))).status).toBe(200);
    started.add(reconciliationWorkflowId(stripe, id));
    const first = await sweep();
    expect(first.started).toBeGreaterThanOrEqual(1);
    // Forget the mark, as if the process died between the start and the UPDATE.
    const receiptId = Number((await storedFor(database.db, stripe, id)).receipt!.id);
    await database.sql`update webhook_receipts set workflow_started_at = null where id = ${receiptId}`;
    const second = await sweep();
    expect(second).toMatchObject({ found: 1, started: 0, alreadyStarted: 1 });
    const workflowId = reconciliationWorkflowId(stripe, id);
    expect(await runsOf(temporal.client, workflowId)).toHaveLength(1);
  });

  it('I6 the periodic sweep loop (as the worker runs it) picks up a receipt on its own', async () => {
    const app = crashingIngress();
    const { id, body } = stripeEvent();
    expect((await app.request(`/webhooks/${stripe}`, stripeRequest(body))).status).toBe(200);
    started.add(reconciliationWorkflowId(stripe, id));
    const loop = startSweepLoop({ db: database.db, temporal: temporal.client, profile, taskQueue: taskQueues.reconciliation, providers, olderThanMs: 0, limit: 10, intervalMs: 100, logger: testLogger });
    try {
      await waitFor(async () => (await storedFor(database.db, stripe, id)).receipt!.workflow_started_at !== null, 15_000, 'the sweep loop to start the receipt');
    } finally {
      await loop.stop();
    }
    expect(await reconciliationOf(temporal.client, stripe, id)).not.toBeNull();
  });
});

describe('P3 the starter and the sweep drain a backlog without starting one receipt twice', () => {
  /** N acknowledged receipts that no starter started. */
  async function backlog(n: number) {
    const app = crashingIngress();
    const receipts: { id: string; receiptId: number; body: string }[] = [];
    for (let i = 0; i < n; i += 1) {
      const { id, body } = stripeEvent();
      expect((await app.request(`/webhooks/${stripe}`, stripeRequest(body))).status).toBe(200);
      started.add(reconciliationWorkflowId(stripe, id));
      receipts.push({ id, body, receiptId: Number((await storedFor(database.db, stripe, id)).receipt!.id) });
    }
    return receipts;
  }

  it('P3 two sweeps at once (two worker replicas) claim disjoint receipts: each found once, none started twice', async () => {
    const receipts = await backlog(12);
    const [a, b] = await Promise.all([sweep(), sweep()]);
    // Without the claim both sweeps read the same unstarted rows and raced for every start.
    expect(a!.found + b!.found).toBe(receipts.length);
    expect(a!.started + b!.started).toBe(receipts.length);
    expect(a!.alreadyStarted + b!.alreadyStarted).toBe(0);
    for (const r of receipts) {
      expect(await runsOf(temporal.client, reconciliationWorkflowId(stripe, r.id))).toHaveLength(1);
      expect((await storedFor(database.db, stripe, r.id)).receipt!.workflow_started_at).not.toBeNull();
    }
    expect((await sweep()).found).toBe(0);
  });

  it('P3 a receipt that waited in the starter longer than its bound is left to the sweep, which starts it once', async () => {
    const receipts = await backlog(8);
    // The first start goes at once; every later one is held past the bound (a 1 ms bound alone also deferred the
    // first one when the machine was busy).
    const starter = boundedStarter(receipts, 100, heldAfterFirst(200));
    await starter.idle();
    const marked = await database.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_receipts where id in ${database.sql(receipts.map((r) => r.receiptId))} and workflow_started_at is not null`;
    expect(marked[0]!.n).toBeGreaterThanOrEqual(1);
    expect(marked[0]!.n).toBeLessThan(receipts.length);
    const result = await sweep();
    expect(result).toEqual({ found: receipts.length - marked[0]!.n, started: receipts.length - marked[0]!.n, alreadyStarted: 0, failed: 0 });
    for (const r of receipts) expect(await runsOf(temporal.client, reconciliationWorkflowId(stripe, r.id))).toHaveLength(1);
  });

  it('P3 when every receipt waited past its bound, the starter still settles (idle) and the sweep starts them all', async () => {
    const receipts = await backlog(3);
    const starter = boundedStarter(receipts, 50, { acquire: () => new Promise((r) => setTimeout(r, 100)) }); // all held past it
    const settled = await Promise.race([starter.idle().then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
    expect(settled, 'idle() resolves once every job was attempted or deferred').toBe(true);
    expect(await sweep()).toEqual({ found: 3, started: 3, alreadyStarted: 0, failed: 0 });
  });

  it('P3 a completed reconciliation is never started again: a late start is refused by the id reuse policy', async () => {
    const [r] = await backlog(1);
    expect((await sweep()).started).toBe(1);
    const workflowId = reconciliationWorkflowId(stripe, r!.id);
    await temporal.client.workflow.getHandle(workflowId).terminate('closed, as a finished reconciliation would be');
    await database.sql`update webhook_receipts set workflow_started_at = null where id = ${r!.receiptId}`;
    expect(await sweep()).toMatchObject({ found: 1, started: 0, alreadyStarted: 1 });
    expect(await runsOf(temporal.client, workflowId)).toHaveLength(1);
  });
});
