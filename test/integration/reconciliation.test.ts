// I7–I12 on the real Temporal dev server and PostgreSQL: the reconciliation workflow against the provider sandbox's
// payments API, steered per payment, the ledger it posts to, the projection and the operator resolutions.
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { ledgerTransactions, operatorResolutions, reconciliations, reconciliationTransitions } from '../../src/db/schema/index.js';
import { loadReconciliationRules } from '../../src/inbound/load-rules.js';
import { accounts } from '../../src/ledger/postings.js';
import { settledAmount } from '../../src/ledger/store.js';
import { operatorResolutionSignal, reconciliationStateQuery, resolveUpdate } from '../../src/shared/inbound.js';
import { SA } from '../../src/shared/search-attributes.js';
import { bindReconciliationGauges } from '../../src/metrics/inbound-ledger.js';
import { registry } from '../../src/metrics/registry.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY, WORKFLOW_BUNDLE_PATH } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import {
  entriesOf,
  ledgerRowsFor,
  providerEvent,
  startPaymentsPeer,
  startReconciliation,
  succeeded,
  waitFor,
} from '../helpers/reconciliation.js';
import { connectDevServer, handleAs, startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let profile: ReturnType<typeof testProfile>;
let provisionalProfile: ReturnType<typeof testProfile>;
const stops: (() => Promise<void>)[] = [];
const taskQueues = uniqueTaskQueues('reconcile');
const provisionalQueues = uniqueTaskQueues('provisional');
const crashQueues = uniqueTaskQueues('crash');

const inbound = (baseUrl: string, extra: Record<string, unknown> = {}) => ({
  inbound: {
    providers: { 'sandbox-stripe': { api_base_url: baseUrl } },
    provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
    reconciliation_timeout: '20s',
    ...extra,
  },
});

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 6 });
  temporal = await connectDevServer();
  peer = await startPaymentsPeer();
  profile = testProfile(inbound(peer.baseUrl));
  provisionalProfile = testProfile(inbound(peer.baseUrl, { allow_provisional_access: true, reconciliation_timeout: '2s' }));
  const deps = { db: database.db, logger: testLogger, secretsKey: TEST_SECRETS_KEY };
  const activities = createActivities({ ...deps, profile });
  stops.push((await startWorkers({ connection: temporal.native, taskQueues, activities })).stop);
  stops.push((await startWorkers({ connection: temporal.native, taskQueues: provisionalQueues, activities: createActivities({ ...deps, profile: provisionalProfile }) })).stop);
  // I9: a worker that dies after the ledger commit and before reporting completion, once per posting.
  const crashed = new Set<string>();
  const crashing = {
    ...activities,
    async postLedgerTransaction(request: Parameters<typeof activities.postLedgerTransaction>[0]) {
      const result = await activities.postLedgerTransaction(request);
      const key = `${request.event.providerEventId}:${request.kind}`;
      if (!crashed.has(key)) {
        crashed.add(key);
        throw new Error('worker crashed after the ledger commit');
      }
      return result;
    },
  };
  stops.push((await startWorkers({ connection: temporal.native, taskQueues: crashQueues, activities: crashing })).stop);
});

afterAll(async () => {
  for (const stop of stops) await stop();
  await peer?.close();
  await temporal?.close();
  await database?.close();
});

const projectionOf = async (id: string) => (await database.db.select().from(reconciliations).where(eq(reconciliations.id, id)))[0];
const transitionsOf = async (id: string) =>
  (await database.db.select().from(reconciliationTransitions).where(eq(reconciliationTransitions.reconciliationId, id)).orderBy(reconciliationTransitions.id)).map(
    (t) => `${t.fromState}>${t.toState}`,
  );
const waitForState = (handle: { query: (q: typeof reconciliationStateQuery) => Promise<{ state: string }> }, state: string) =>
  waitFor(async () => (await handle.query(reconciliationStateQuery)).state === state, 60_000, `state ${state}`);

describe('I8 reconcile against the provider', () => {
  it('I8 provider confirms with the same amount and currency → ledger posting → applied', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    const outcome = await handle.result();
    expect(outcome.state).toBe('applied');
    const txns = await ledgerRowsFor(database.db, event.paymentReference);
    expect(txns.map((t) => t.kind)).toEqual(['payment']);
    expect(outcome.ledgerTransactionId).toBe(txns[0]!.id);
    expect(await settledAmount(database.db, 'sandbox-stripe', event.paymentReference, 'EUR')).toBe(1000n);
    const row = await projectionOf(handle.workflowId);
    expect(row).toMatchObject({ state: 'applied', ledgerTransactionId: txns[0]!.id, providerAmountMinor: 1000n });
    expect(await transitionsOf(handle.workflowId)).toEqual(['received>reconciling', 'reconciling>applied']);
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(SA.reconciliationState)).toBe('applied');
    expect(description.typedSearchAttributes.get(SA.provider)).toBe('sandbox-stripe');
  });

  it('I8 provider declines → rejected, no ledger row', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event, { status: 'failed' }));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    expect((await handle.result()).state).toBe('rejected');
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    expect((await projectionOf(handle.workflowId))?.state).toBe('rejected');
  });

  it('I8 provider errors and unknown answers are retried until it confirms (never assumed paid meanwhile)', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, 'error');
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    await waitFor(async () => peer.hits(event.paymentReference) >= 3, 45_000, 'three provider queries');
    const progress = await handle.query(reconciliationStateQuery);
    expect(progress.state).toBe('reconciling');
    expect(progress.reason).toMatch(/provider_error/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    peer.set(event.paymentReference, succeeded(event, { status: 'pending' }));
    await waitFor(async () => (await handle.query(reconciliationStateQuery)).reason === 'provider reports pending', 45_000, 'pending seen');
    peer.set(event.paymentReference, succeeded(event));
    expect((await handle.result()).state).toBe('applied');
    expect((await ledgerRowsFor(database.db, event.paymentReference)).length).toBe(1);
  });

  it.each([
    ['amount', { amountMinor: '900' }, /amount_mismatch/],
    ['currency', { currency: 'USD' }, /currency_mismatch/],
  ])('I8 %s mismatch between provider and webhook → manual_review with no ledger row', async (_, patch, reason) => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event, patch));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    await waitForState(handle, 'manual_review');
    expect((await handle.query(reconciliationStateQuery)).reason).toMatch(reason);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    const row = await projectionOf(handle.workflowId);
    expect(row?.state).toBe('manual_review');
    expect(row?.reason).toMatch(reason);
    await handle.terminate('test done');
  });
});

describe('I9 ledger idempotency', () => {
  it('I9 the ledger activity fails after its commit and is retried: exactly one transaction', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event));
    const handle = await startReconciliation(temporal.client, profile, crashQueues.reconciliation, event);
    const outcome = await handle.result();
    expect(outcome.state).toBe('applied');
    const txns = await ledgerRowsFor(database.db, event.paymentReference);
    expect(txns).toHaveLength(1);
    expect(outcome.ledgerTransactionId).toBe(txns[0]!.id);
    expect(await entriesOf(database.db, accounts.payment('sandbox-stripe', event.paymentReference))).toHaveLength(1);
  });

  it('I9 the same posting twice returns the same transaction; the same key with other content is a LedgerConflictError', async () => {
    const activities = createActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
    const event = providerEvent();
    const request = { kind: 'payment' as const, provider: 'sandbox-stripe', reconciliationId: 'n/a', event, acknowledgedAt: new Date().toISOString(), actor: 'system' };
    const first = await activities.postLedgerTransaction(request);
    const second = await activities.postLedgerTransaction(request);
    expect(first.status).toBe('posted');
    expect(second).toMatchObject({ status: 'replayed', transactionId: (first as { transactionId: string }).transactionId });
    const conflicting = activities.postLedgerTransaction({ ...request, event: { ...event, amountMinor: '1001' } });
    await expect(conflicting).rejects.toMatchObject({ type: 'LedgerConflictError', nonRetryable: true }); // R4: classified, never retried
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toHaveLength(1);
  });
});

describe('I10 ordering', () => {
  it('I10 a late event with an older effective time after settlement changes nothing', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event));
    expect((await (await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event)).result()).state).toBe('applied');
    const older = new Date(Date.parse(event.effectiveAt) - 3_600_000).toISOString();
    const lateFailure = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, providerEvent({ ...event, providerEventId: `evt_late_${event.providerEventId}`, type: 'payment.failed', effectiveAt: older }));
    const failed = await lateFailure.result();
    expect(failed.state).toBe('rejected');
    expect(failed.reason).toMatch(/never changes a settled payment/);
    const lateCapture = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, providerEvent({ ...event, providerEventId: `evt_dup_${event.providerEventId}`, effectiveAt: older }));
    const capture = await lateCapture.result();
    // L1: a second event for a capture already posted is a duplicate: nothing posted, recorded as such.
    expect(capture.state).toBe('rejected');
    expect(capture.reason).toMatch(/^duplicate: payment already settled by event /);
    expect(capture.ledgerTransactionId).toBeNull();
    expect((await ledgerRowsFor(database.db, event.paymentReference)).map((t) => t.kind)).toEqual(['payment']);
    expect(await settledAmount(database.db, 'sandbox-stripe', event.paymentReference, 'EUR')).toBe(1000n);
  });

  it('I10 a refund before its capture waits for it; then the capture: the balance is right', async () => {
    const capture = providerEvent();
    const refund = providerEvent({ type: 'refund.succeeded', paymentReference: capture.paymentReference, amountMinor: '300' });
    peer.set(capture.paymentReference, succeeded(capture, { status: 'refunded', refunds: [{ id: 're_1', amountMinor: '300' }] }));
    const refundHandle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, refund);
    await waitFor(async () => (await refundHandle.query(reconciliationStateQuery)).reason?.startsWith('awaiting_capture'), 45_000, 'awaiting capture');
    expect(await ledgerRowsFor(database.db, capture.paymentReference)).toEqual([]);
    const captureHandle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, capture);
    expect((await captureHandle.result()).state).toBe('applied');
    expect((await refundHandle.result()).state).toBe('applied');
    expect((await ledgerRowsFor(database.db, capture.paymentReference)).map((t) => t.kind)).toEqual(['payment', 'refund']);
    expect(await settledAmount(database.db, 'sandbox-stripe', capture.paymentReference, 'EUR')).toBe(700n);
  });

  it('I10 a refund after settlement posts a new reversing transaction; refunds beyond the settled amount go to manual_review', async () => {
    const capture = providerEvent();
    peer.set(capture.paymentReference, succeeded(capture));
    expect((await (await startReconciliation(temporal.client, profile, taskQueues.reconciliation, capture)).result()).state).toBe('applied');
    peer.set(capture.paymentReference, succeeded(capture, { status: 'refunded', refunds: [{ id: 're_a', amountMinor: '600' }, { id: 're_b', amountMinor: '600' }] }));
    const first = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, providerEvent({ type: 'refund.succeeded', paymentReference: capture.paymentReference, amountMinor: '600' }));
    expect((await first.result()).state).toBe('applied');
    const txns = await ledgerRowsFor(database.db, capture.paymentReference);
    expect(txns.map((t) => t.kind)).toEqual(['payment', 'refund']);
    expect(await settledAmount(database.db, 'sandbox-stripe', capture.paymentReference, 'EUR')).toBe(400n);
    const second = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, providerEvent({ type: 'refund.succeeded', paymentReference: capture.paymentReference, amountMinor: '600' }));
    await waitForState(second, 'manual_review');
    expect((await second.query(reconciliationStateQuery)).reason).toMatch(/reversal_exceeds_settled/);
    expect(await settledAmount(database.db, 'sandbox-stripe', capture.paymentReference, 'EUR')).toBe(400n);
    await second.terminate('test done');
  });
});

describe('I11 manual review', () => {
  async function parked() {
    const event = providerEvent({ amountMinor: '1500' });
    peer.set(event.paymentReference, succeeded(event, { amountMinor: '1400' }));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    await waitForState(handle, 'manual_review');
    return { event, handle };
  }
  const auditRows = (id: string) => database.db.select().from(operatorResolutions).where(eq(operatorResolutions.reconciliationId, id));

  it('I11 the resolve update to applied posts once, leaves one audit row, and a second resolution is refused', async () => {
    const { event, handle } = await parked();
    // A4: sent to Temporal directly (allowed by the test profile), recorded as the identity of the client that sent it.
    const ana = handleAs(temporal.connection, 'ana@finance', handle.workflowId);
    const answer = await ana.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'whoever', reason: 'provider fee confirmed by phone' }] });
    expect(answer.state).toBe('applied');
    const [audit, ...more] = await auditRows(handle.workflowId);
    expect(more).toEqual([]);
    expect(audit).toMatchObject({ id: answer.auditId, decision: 'applied', operator: 'ana@finance', previousState: 'manual_review', amountMinor: 1500n, providerAmountMinor: 1400n, currency: 'EUR' });
    const txns = await ledgerRowsFor(database.db, event.paymentReference);
    expect(txns).toHaveLength(1);
    expect(audit!.ledgerTransactionId).toBe(txns[0]!.id);
    expect((await handle.result()).state).toBe('applied');
    await expect(handle.executeUpdate(resolveUpdate, { args: [{ decision: 'rejected', operator: 'bob', reason: 'again' }] })).rejects.toThrow();
    expect(await auditRows(handle.workflowId)).toHaveLength(1);
    expect(await transitionsOf(handle.workflowId)).toEqual(['received>reconciling', 'reconciling>manual_review', 'manual_review>applied']);
  });

  it('I11 the operatorResolution signal to rejected leaves one audit row and no ledger row', async () => {
    const { event, handle } = await parked();
    await handleAs(temporal.connection, 'bob@finance', handle.workflowId).signal(operatorResolutionSignal, { decision: 'rejected', operator: 'bob', reason: 'customer never paid' });
    expect((await handle.result()).state).toBe('rejected');
    const rows = await auditRows(handle.workflowId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ decision: 'rejected', operator: 'bob@finance', ledgerTransactionId: null });
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
  });

  it('I11/I9 applying a resolution the ledger refuses (payment settled meanwhile with another amount) answers the reason and stays in manual_review', async () => {
    const { event, handle } = await parked();
    const correct = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, providerEvent({ ...event, providerEventId: `evt_ok_${event.providerEventId}`, amountMinor: '1400' }));
    expect((await correct.result()).state).toBe('applied');
    // L2: post the webhook's 1500 where 1400 is already settled: the ledger refuses it.
    const refused = await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'ana', reason: 'looks fine', post: 'webhook' }] }).catch((e) => e);
    expect(String(refused?.cause?.message ?? refused)).toMatch(/cannot apply: .*already posted with other content/);
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
    expect(await auditRows(handle.workflowId)).toHaveLength(0);
    const answer = await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'rejected', operator: 'ana', reason: 'settled by the other event' }] });
    expect(answer.state).toBe('rejected');
    expect(await auditRows(handle.workflowId)).toHaveLength(1);
    expect(await settledAmount(database.db, 'sandbox-stripe', event.paymentReference, 'EUR')).toBe(1400n);
  });

  it('I11 the update validator refuses invalid decisions and resolutions outside manual_review', async () => {
    const { handle } = await parked();
    await expect(handle.executeUpdate(resolveUpdate, { args: [{ decision: 'maybe' as 'applied', operator: 'x', reason: 'y' }] })).rejects.toThrow();
    await expect(handle.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: '', reason: 'y' }] })).rejects.toThrow();
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
    expect(await auditRows(handle.workflowId)).toHaveLength(0);
    await handle.terminate('test done');

    const event = providerEvent();
    peer.set(event.paymentReference, 'error');
    const reconciling = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    await waitForState(reconciling, 'reconciling');
    await expect(reconciling.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'x', reason: 'y' }] })).rejects.toThrow();
    await reconciling.terminate('test done');
  });
});

describe('I13 ledger metrics', () => {
  it('I13 a posting counts a ledger mutation and observes the ack-to-ledger lag; depth and review gauges read PostgreSQL', async () => {
    // C7: the system-wide gauges are bound by the API process only; this in-process registry binds them here.
    bindReconciliationGauges(database.db);
    const value = async (name: string, labels: Record<string, string> = {}) => {
      const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
      const sample = (metric?.values ?? []).find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
      return Number(sample?.value ?? 0);
    };
    const postedBefore = await value('apipay_ledger_mutations_total', { kind: 'payment', result: 'posted' });
    const lagBefore = await value('apipay_inbound_ack_to_ledger_seconds', { kind: 'payment', le: '+Inf' });
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event));
    const acknowledgedAt = new Date(Date.now() - 2_000).toISOString();
    expect((await (await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event, { acknowledgedAt })).result()).state).toBe('applied');
    expect(await value('apipay_ledger_mutations_total', { kind: 'payment', result: 'posted' })).toBe(postedBefore + 1);
    expect(await value('apipay_inbound_ack_to_ledger_seconds', { kind: 'payment', le: '+Inf' })).toBe(lagBefore + 1);
    expect(await value('apipay_inbound_ack_to_ledger_seconds', { kind: 'payment', le: '1' })).toBeLessThanOrEqual(lagBefore);
    const [counts] = await database.db.execute<{ depth: number; review: number }>(
      sql`select count(*) filter (where state not in ('applied','rejected'))::int as depth, count(*) filter (where state = 'manual_review')::int as review from reconciliations`,
    );
    expect(await value('apipay_reconciliation_queue_depth')).toBeGreaterThanOrEqual(Math.min(1, counts!.depth));
    const text = await registry.metrics();
    expect(text).toMatch(/apipay_reconciliation_manual_review_open \d+/);
    expect(text).toMatch(/apipay_reconciliation_manual_review_oldest_age_seconds [\d.]+/);
    expect(text).toMatch(/apipay_reconciliation_manual_review_rate [\d.]+/);
    expect(text).toMatch(/# TYPE apipay_reconciliation_rejected_total counter/);
  });
});

describe('I7 and I12', () => {
  it('I7 a transition the state file does not list fails the workflow loudly, before any ledger posting', async () => {
    const full = loadReconciliationRules();
    const rules = { ...full, transitions: full.transitions.filter((t) => !(t.from === 'reconciling' && t.to === 'applied')) };
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event));
    // R20: the rules are the worker's, so this run goes to a worker that runs the narrower state machine.
    const narrowQueues = uniqueTaskQueues('narrow-rules');
    const deps = { db: database.db, logger: testLogger, secretsKey: TEST_SECRETS_KEY, profile, rules };
    stops.push((await startWorkers({ connection: temporal.native, taskQueues: narrowQueues, activities: createActivities(deps) })).stop);
    const handle = await startReconciliation(temporal.client, profile, narrowQueues.reconciliation, event);
    const error = await handle.result().catch((e) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(error.cause?.type ?? error.cause?.name).toBe('IllegalTransitionError');
    expect(error.cause?.message).toMatch(/reconciling → applied/);
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
  });

  it('I7 a finished run replays deterministically from its history alone (R20: the rules are the first step\'s recorded answer, not the input)', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event, { amountMinor: '1' }));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    await waitForState(handle, 'manual_review');
    await handle.executeUpdate(resolveUpdate, { args: [{ decision: 'applied', operator: 'replay', reason: 'replay test' }] });
    await handle.result();
    const history = await handle.fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const started = JSON.parse(Buffer.from(input!.data!).toString());
    expect(started.rules).toBeUndefined();
    expect(started.settings).toBeUndefined();
    // The first step's marker: its payloads name the activity (and its result holds the rules).
    const markerTexts = (history.events ?? [])
      .flatMap((e) => Object.values(e.markerRecordedEventAttributes?.details ?? {}))
      .flatMap((payloads) => payloads.payloads ?? [])
      .map((p) => Buffer.from(p.data ?? []).toString());
    expect(markerTexts.some((t) => t.includes('checkReconciliationStart'))).toBe(true);
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }, history, handle.workflowId)).resolves.toBeUndefined();
  });

  it('I12 no provisional access by default: nothing is posted while the outcome is unknown', async () => {
    expect(profile.inbound.allow_provisional_access).toBe(false);
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event, { status: 'pending' }));
    const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event);
    await waitFor(async () => peer.hits(event.paymentReference) >= 3, 45_000, 'queries while pending');
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    expect(await entriesOf(database.db, accounts.provisional('sandbox-stripe', event.paymentReference))).toEqual([]);
    await handle.terminate('test done');
  });

  it('I12 with allow_provisional_access: true, a provisional credit on its own accounts, released at the end', async () => {
    const event = providerEvent();
    peer.set(event.paymentReference, succeeded(event, { status: 'pending' }));
    const handle = await startReconciliation(temporal.client, provisionalProfile, provisionalQueues.reconciliation, event);
    await waitForState(handle, 'manual_review');
    const txns = await ledgerRowsFor(database.db, event.paymentReference);
    expect(txns.map((t) => t.kind)).toEqual(['provisional', 'provisional_release']);
    expect(await settledAmount(database.db, 'sandbox-stripe', event.paymentReference, 'EUR')).toBe(0n);
    const provisional = await entriesOf(database.db, accounts.provisional('sandbox-stripe', event.paymentReference));
    expect(provisional.reduce((sum, e) => sum + e.amountMinor, 0n)).toBe(0n);
    await handle.terminate('test done');
    void ledgerTransactions;
  });
});
