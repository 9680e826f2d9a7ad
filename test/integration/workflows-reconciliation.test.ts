// I7/I8/I9/I11/I12: the branches of reconciliationWorkflow with stubbed activities on the time-skipping server (no
// database, no provider): the query-provider phase (confirmed, declined, provider errors then an answer, no
// answer until the timeout, a ledger conflict), the settle phase (posted, settled by an earlier event, the
// provisional credit and its release) and the operator review (through `review`, the one helper to adapt when the
// resolution phase changes).
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { LedgerPostingResult, ProviderQueryResult } from '../../src/activities/reconciliation.js';
import { loadReconciliationRules } from '../../src/inbound/load-rules.js';
import { buildReconciliationInput, reconciliationSettings } from '../../src/inbound/start.js';
import {
  RECONCILIATION_WORKFLOW,
  reconciliationStateQuery,
  resolveUpdate,
  type NormalizedProviderEvent,
  type OperatorResolution,
  type ReconciliationSettings,
  type ReconciliationWorkflowInput,
} from '../../src/shared/inbound.js';
import type { reconciliationWorkflow } from '../../src/workflows/reconciliation/index.js';
import { testProfile } from '../helpers/profile.js';
import { providerEvent, succeeded } from '../helpers/reconciliation.js';
import { useStubServer, type StubWorker } from '../helpers/stub-worker.js';
import { waitFor } from '../helpers/wait.js';

const MINUTE = 60_000;

const server = useStubServer();

interface Script {
  /** The provider's answer to the n-th query (0-based). */
  answer: (n: number, event: NormalizedProviderEvent) => ProviderQueryResult;
  /** The ledger's answer to a posting of `kind`; throw an ApplicationFailure to refuse it. */
  post?: (kind: string, event: NormalizedProviderEvent) => LedgerPostingResult;
  /** R20: what the worker's profile says beyond the test profile (the first step's answer). */
  settings?: Partial<ReconciliationSettings>;
}

const posted = (event: NormalizedProviderEvent, providerEventId = event.providerEventId): LedgerPostingResult => ({
  status: 'posted',
  transactionId: `ltx_${event.providerEventId.slice(-8)}`,
  postedAt: new Date().toISOString(),
  providerEventId,
});

async function stubs(label: string, script: Script) {
  let n = 0;
  let current: NormalizedProviderEvent | undefined;
  const worker = await server.start(label, {
    // R20: the start is trusted; the rules and settings are the worker's (here the test profile's).
    async checkReconciliationStart(_request: unknown) {
      return {
        outcome: 'trusted' as const,
        rules: loadReconciliationRules(),
        settings: { ...reconciliationSettings(testProfile()), ...script.settings },
      };
    },
    async sealReconciliationContinuation(_request: unknown) {
      return { seal: 'k1.stub' };
    },
    async queryProviderPayment(_request: { provider: string; paymentReference: string }) {
      return script.answer(n++, current!);
    },
    async postLedgerTransaction(request: { kind: string; event: NormalizedProviderEvent }) {
      return (script.post ?? ((_kind, event) => posted(event)))(request.kind, request.event);
    },
    async recordReconciliationTransition(_record: { to: string }) {},
    async recordOperatorResolution(_record: unknown) {
      return { auditId: 'aud_1' };
    },
    // L5: no ledger position, so no post-settlement discrepancy in these branches.
    async ledgerPosition(_request: unknown) {
      return null;
    },
    async postSettlementCorrection(_request: unknown) {
      return null;
    },
    // R2: posting, audit row and transition of a resolution are one activity (one PostgreSQL transaction).
    async commitOperatorResolution(command: { resolution: OperatorResolution }) {
      const applied = command.resolution.decision !== 'rejected';
      return {
        status: 'committed' as const,
        state: applied ? 'applied' : 'rejected',
        auditId: 'aud_1',
        ledgerTransactionId: command.resolution.decision === 'applied' ? 'ltx_operator' : null,
        replayed: false,
        note: null,
      };
    },
  });
  const start = async (event = providerEvent(), patch: Partial<ReconciliationWorkflowInput> = {}) => {
    current = event;
    // Acknowledged "now" on the test server's clock, which earlier tests of this file have moved ahead (I8 deadline).
    const acknowledgedAt = new Date(await server.env.currentTimeMs()).toISOString();
    const input = buildReconciliationInput({ provider: 'sandbox-stripe', receiptId: 0, event, acknowledgedAt });
    return server.env.client.workflow.start<typeof reconciliationWorkflow>(RECONCILIATION_WORKFLOW, {
      taskQueue: worker.taskQueue,
      workflowId: `rec-stub-${event.providerEventId}`,
      args: [{ ...input, ...patch }],
    });
  };
  return { worker, start };
}

const transitions = (w: StubWorker) => w.callsOf('recordReconciliationTransition').map((r) => (r as { to: string }).to);
const kinds = (w: StubWorker) => w.callsOf('postLedgerTransaction').map((r) => (r as { kind: string }).kind);

/** Skips workflow time (backoffs, the I8 timeout) in steps until the reconciliation is in `state`; returns its progress. */
async function untilState(handle: WorkflowHandle, state: string) {
  return waitFor(
    async () => {
      const progress = await handle.query(reconciliationStateQuery);
      if (progress.state === state) return progress;
      await server.env.sleep(10 * MINUTE);
      return undefined;
    },
    30_000,
    `state ${state}`,
  );
}

/** The operator-review phase: reach manual_review, resolve through the `resolve` update, return its answer. */
async function review(handle: WorkflowHandle, resolution: OperatorResolution) {
  await untilState(handle, 'manual_review');
  return handle.executeUpdate(resolveUpdate, { args: [resolution] });
}

describe('reconciliationWorkflow: query the provider, settle', () => {
  it('I7 confirmed at the first query: posted, applied', async () => {
    const { worker, start } = await stubs('confirmed', { answer: (_n, e) => ({ outcome: 'found', payment: succeeded(e) }) });
    const result = await (await start()).result();
    expect(result).toMatchObject({ state: 'applied', auditId: null });
    expect(result.ledgerTransactionId).toMatch(/^ltx_/);
    expect(transitions(worker)).toEqual(['received', 'reconciling', 'applied']);
    expect(kinds(worker)).toEqual(['payment']);
  });

  it('I7 declined by the provider: rejected, nothing posted', async () => {
    const { worker, start } = await stubs('declined', {
      answer: (_n, e) => ({ outcome: 'found', payment: succeeded(e, { status: 'failed' }) }),
    });
    const result = await (await start()).result();
    expect(result).toMatchObject({ state: 'rejected', ledgerTransactionId: null });
    expect(kinds(worker)).toEqual([]);
  });

  it('I8 provider errors, then an answer: queried again after the backoff, then applied', async () => {
    const { worker, start } = await stubs('errors-then-found', {
      answer: (n, e) =>
        n < 2 ? { outcome: 'error', status: 503, message: 'provider answered 503' } : { outcome: 'found', payment: succeeded(e) },
    });
    const handle = await start();
    expect(await untilState(handle, 'applied')).toMatchObject({ state: 'applied', providerQueries: 3 });
    expect(worker.callsOf('queryProviderPayment')).toHaveLength(3);
  });

  it('I8 no authoritative answer before the timeout: manual_review with the timeout as reason', async () => {
    const { start } = await stubs('timeout', { answer: () => ({ outcome: 'not_found' }) });
    const handle = await start();
    expect((await untilState(handle, 'manual_review')).reason).toMatch(/^timeout: no authoritative answer/);
  });

  it('I8 an amount that disagrees: manual_review, no credit', async () => {
    const { worker, start } = await stubs('mismatch', {
      answer: (_n, e) => ({ outcome: 'found', payment: succeeded(e, { amountMinor: '1' }) }),
    });
    const handle = await start();
    expect((await untilState(handle, 'manual_review')).reason).toMatch(/^amount_mismatch/);
    expect(kinds(worker)).toEqual([]);
  });

  it('I9 the ledger refuses the posting (conflict): manual_review with the ledger reason', async () => {
    const { start } = await stubs('ledger-conflict', {
      answer: (_n, e) => ({ outcome: 'found', payment: succeeded(e) }),
      post: () => {
        throw ApplicationFailure.nonRetryable('key k already posted as ltx_1', 'LedgerConflictError');
      },
    });
    const handle = await start();
    expect((await untilState(handle, 'manual_review')).reason).toMatch(/^ledger_conflict: key k already posted/);
  });

  it('I10 + L1 already posted by an earlier event: a duplicate, rejected without a posting, the reason names that event', async () => {
    const { start } = await stubs('settled-by', {
      answer: (_n, e) => ({ outcome: 'found', payment: succeeded(e) }),
      post: () => ({ status: 'duplicate', transactionId: 'ltx_earlier', providerEventId: 'evt_earlier' }),
    });
    const result = await (await start()).result();
    expect(result).toMatchObject({ state: 'rejected', ledgerTransactionId: null });
    expect(result.reason).toMatch(/^duplicate: .*evt_earlier/);
  });

  it('I12 provisional access: a provisional credit while unknown, released once the payment is posted', async () => {
    const { worker, start } = await stubs('provisional', {
      answer: (n, e) =>
        n === 0
          ? { outcome: 'found', payment: succeeded(e, { status: 'pending' }) }
          : { outcome: 'found', payment: succeeded(e) },
      settings: { allowProvisionalAccess: true },
    });
    const handle = await start();
    await untilState(handle, 'applied');
    await handle.result();
    expect(kinds(worker)).toEqual(['provisional', 'payment', 'provisional_release']);
  });
});

describe('reconciliationWorkflow: operator review', () => {
  it('I11 an operator applies a reviewed reconciliation: posted as the operator, audited, applied', async () => {
    const { worker, start } = await stubs('review-apply', { answer: () => ({ outcome: 'not_found' }) });
    const handle = await start();
    const answer = await review(handle, { decision: 'applied', operator: 'ops@example.com', reason: 'confirmed by phone' });
    expect(answer).toMatchObject({ state: 'applied', auditId: 'aud_1', ledgerTransactionId: 'ltx_operator' });
    expect(await handle.result()).toMatchObject({ state: 'applied', auditId: 'aud_1', ledgerTransactionId: 'ltx_operator' });
    // Posting, audit and transition are one activity call (R2), never the three separate ones.
    expect(worker.callsOf('commitOperatorResolution')).toHaveLength(1);
    expect(kinds(worker)).toEqual([]);
    expect(transitions(worker).at(-1)).toBe('manual_review');
  });

  it('I11 an operator rejects it: nothing posted, rejected', async () => {
    const { worker, start } = await stubs('review-reject', { answer: () => ({ outcome: 'not_found' }) });
    const handle = await start();
    expect(await review(handle, { decision: 'rejected', operator: 'ops@example.com', reason: 'fraud' })).toMatchObject({
      state: 'rejected',
    });
    expect(worker.callsOf('commitOperatorResolution')).toHaveLength(1);
    expect(kinds(worker)).toEqual([]);
  });

  it('I11 a resolution without a reason is refused and the reconciliation stays in review', async () => {
    const { start } = await stubs('review-invalid', { answer: () => ({ outcome: 'not_found' }) });
    const handle = await start();
    await expect(review(handle, { decision: 'applied', operator: 'ops@example.com', reason: ' ' })).rejects.toThrow();
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
  });
});
