// O6/O12/R4: every branch of deliveryWorkflow with stubbed activities on the time-skipping server (no database,
// no merchant): delivered at once, after retries, exhausted, stopped by a disabled endpoint, a non-retryable
// failure, retryNow during a backoff and during review (continue-as-new), and a run started for a closed delivery.
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { AttemptResult, DeliveryState } from '../../src/activities/delivery.js';
import type { DeliveryStartCheck } from '../../src/activities/delivery-trust.js';
import {
  DELIVERY_WORKFLOW,
  deliveryStatusQuery,
  retryNowSignal,
  type DeliveryProgress,
  type DeliveryWorkflowInput,
} from '../../src/shared/outbound.js';
import type { deliveryWorkflow } from '../../src/workflows/delivery.js';
import { useStubServer, type StubWorker } from '../helpers/stub-worker.js';
import { waitFor } from '../helpers/wait.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SCHEDULE = [1 * MINUTE, 5 * MINUTE];

const server = useStubServer();

interface Script {
  /** Outcome of the n-th attempt (0-based); 'throw' fails it non-retryably (R4). */
  attempt?: (n: number) => 'delivered' | 'failed' | 'stop' | 'throw';
  state?: Partial<DeliveryState>;
}

async function stubs(label: string, script: Script) {
  let n = 0;
  const worker = await server.start(label, {
    // R20: the start matches its row (the row's status decides nothing here: loadDeliveryState's does).
    async checkDeliveryStart(): Promise<DeliveryStartCheck> {
      return { outcome: 'trusted', status: 'PENDING', attemptCount: 0 };
    },
    async attemptDelivery(input: { attemptNumber: number }): Promise<AttemptResult> {
      const kind = (script.attempt ?? (() => 'delivered'))(n++);
      if (kind === 'throw')
        throw ApplicationFailure.nonRetryable('endpoint we_1 has no active signing secret', 'MissingSigningSecretError');
      return {
        outcome: kind === 'delivered' ? 'delivered' : 'failed',
        attemptNumber: input.attemptNumber,
        responseStatus: kind === 'delivered' ? 200 : 500,
        errorKind: kind === 'delivered' ? null : 'http_5xx',
        latencyMs: 1,
        stopRetrying: kind === 'stop',
      } as AttemptResult;
    },
    async loadDeliveryState(): Promise<DeliveryState> {
      return {
        status: 'FAILED',
        attemptCount: 3,
        endpointId: 'we_1',
        merchantAccount: 'acct_1',
        eventType: 'payment.succeeded',
        ...script.state,
      } as DeliveryState;
    },
    async reopenDelivery() {},
    async failDelivery() {},
  });
  return worker;
}

function start(worker: { taskQueue: string }, input: Partial<DeliveryWorkflowInput> = {}) {
  const deliveryId = `dlv_stub_${Math.random().toString(36).slice(2, 10)}`;
  const args: DeliveryWorkflowInput = { deliveryId, retryScheduleMs: SCHEDULE, priorAttempts: 0, reviewWindowMs: DAY, ...input };
  return server.env.client.workflow.start<typeof deliveryWorkflow>(DELIVERY_WORKFLOW, {
    taskQueue: worker.taskQueue,
    workflowId: deliveryId,
    args: [args],
  });
}

const attemptNumbers = (w: StubWorker) => w.callsOf('attemptDelivery').map((i) => (i as { attemptNumber: number }).attemptNumber);

describe('deliveryWorkflow branches (stubbed activities, time skipping)', () => {
  it('O6 delivered at the first attempt: DELIVERED, one attempt, nothing else called', async () => {
    const w = await stubs('at-once', {});
    const result: DeliveryProgress = await (await start(w)).result();
    expect(result).toEqual({ status: 'DELIVERED', attemptCount: 1, nextAttemptAt: null });
    expect(w.calls.map((c) => c.name)).toEqual(['checkDeliveryStart', 'attemptDelivery']);
  });

  it('O6 failed twice, delivered at the third attempt after the durable backoffs', async () => {
    const w = await stubs('retries', { attempt: (n) => (n < 2 ? 'failed' : 'delivered') });
    const result = await (await start(w)).result();
    expect(result).toMatchObject({ status: 'DELIVERED', attemptCount: 3 });
    expect(attemptNumbers(w)).toEqual([1, 2, 3]);
    expect(w.callsOf('attemptDelivery').map((i) => (i as { retryInMs: number | null }).retryInMs)).toEqual([
      MINUTE,
      5 * MINUTE,
      null,
    ]);
  });

  it('O6/O12 the schedule exhausted: FAILED, open for review, closed FAILED when the window ends', async () => {
    const w = await stubs('exhausted', { attempt: () => 'failed' });
    const handle = await start(w);
    const result = await handle.result();
    expect(result).toEqual({ status: 'FAILED', attemptCount: 3, nextAttemptAt: null });
    expect(w.callsOf('failDelivery')).toEqual([]);
  });

  it('O13 a disabled endpoint stops the schedule at once: FAILED after one attempt', async () => {
    const w = await stubs('stop', { attempt: () => 'stop' });
    const result = await (await start(w)).result();
    expect(result).toMatchObject({ status: 'FAILED', attemptCount: 1 });
  });

  it('R4 a non-retryable activity failure: failDelivery with its reason, FAILED with that reason', async () => {
    const w = await stubs('non-retryable', { attempt: () => 'throw' });
    const result = await (await start(w)).result();
    expect(result.status).toBe('FAILED');
    expect(result.reason).toBe('MissingSigningSecretError: endpoint we_1 has no active signing secret');
    expect(w.callsOf('failDelivery')).toEqual([{ deliveryId: expect.any(String), reason: result.reason }]);
  });

  it('O12 retryNow during a backoff sends the next attempt at once', async () => {
    const w = await stubs('retry-now-backoff', { attempt: (n) => (n === 0 ? 'failed' : 'delivered') });
    const handle = await start(w, { retryScheduleMs: [DAY] });
    await waitFor(async () => (await handle.query(deliveryStatusQuery)).status === 'RETRYING', 20_000, 'RETRYING');
    await handle.signal(retryNowSignal, { operator: 'test' });
    expect(await handle.result()).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    const [first, second] = w.callsOf('attemptDelivery') as { scheduledAt: number }[];
    expect(second!.scheduledAt - first!.scheduledAt).toBeLessThan(DAY); // not after the day-long backoff
  });

  it('O12 retryNow during review: reopenDelivery, then a new run (continue-as-new) that delivers', async () => {
    const w = await stubs('retry-now-review', { attempt: (n) => (n === 0 ? 'failed' : 'delivered') });
    const handle = await start(w, { retryScheduleMs: [] });
    await waitFor(async () => (await handle.query(deliveryStatusQuery)).status === 'FAILED', 20_000, 'FAILED');
    await handle.signal(retryNowSignal, { operator: 'test' });
    const result = await server.env.client.workflow.getHandle(handle.workflowId).result(); // follows the new run
    expect(result).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect(w.callsOf('reopenDelivery')).toHaveLength(1);
    expect(attemptNumbers(w)).toEqual([1, 2]);
  });

  it('O12 a run started for a closed FAILED delivery reads its state, reopens it and continues the attempt numbers', async () => {
    const w = await stubs('from-store', { state: { status: 'FAILED', attemptCount: 3 } });
    const result = await (await start(w, { priorAttempts: undefined })).result();
    expect(result).toMatchObject({ status: 'DELIVERED', attemptCount: 4 });
    expect(w.calls.map((c) => c.name)).toEqual(['checkDeliveryStart', 'loadDeliveryState', 'reopenDelivery', 'attemptDelivery']);
  });

  it('O12 a run started for an already DELIVERED delivery sends nothing', async () => {
    const w = await stubs('already-delivered', { state: { status: 'DELIVERED', attemptCount: 2 } });
    const result = await (await start(w, { priorAttempts: undefined })).result();
    expect(result).toEqual({ status: 'DELIVERED', attemptCount: 2, nextAttemptAt: null });
    expect(w.calls.map((c) => c.name)).toEqual(['checkDeliveryStart', 'loadDeliveryState']);
  });

  it('P1 a run the batched dispatcher starts after a failed attempt 1: RETRYING at once, the durable timer, then attempt 2 on', async () => {
    const w = await stubs('resume-retrying', { attempt: (n) => (n === 0 ? 'failed' : 'delivered') });
    const firstAt = await server.env.currentTimeMs(); // workflow time on the time-skipping server
    const handle = await start(w, { priorAttempts: 1, resume: { status: 'RETRYING', nextAttemptAt: firstAt + MINUTE } });
    expect(await handle.query(deliveryStatusQuery)).toMatchObject({ status: 'RETRYING', attemptCount: 1 });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'DELIVERED', attemptCount: 3 });
    expect(attemptNumbers(w)).toEqual([2, 3]); // attempt 1 was the dispatcher's
    const calls = w.callsOf('attemptDelivery') as { scheduledAt: number; retryInMs: number | null }[];
    expect(calls.map((c) => c.retryInMs)).toEqual([5 * MINUTE, null]); // the schedule goes on from index 1
    expect(calls[0]!.scheduledAt).toBeGreaterThanOrEqual(firstAt + MINUTE - 1000); // after the 1m timer
  });

  it('P1 retryNow during the dispatcher-started backoff sends attempt 2 at once', async () => {
    const w = await stubs('resume-retry-now', { attempt: () => 'delivered' });
    const firstAt = await server.env.currentTimeMs();
    const handle = await start(w, { priorAttempts: 1, resume: { status: 'RETRYING', nextAttemptAt: firstAt + DAY } });
    await handle.signal(retryNowSignal, { operator: 'test' });
    expect(await handle.result()).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    const [second] = w.callsOf('attemptDelivery') as { scheduledAt: number }[];
    expect(second!.scheduledAt - firstAt).toBeLessThan(DAY); // not after the day-long backoff
  });

  it('P1 a run for a delivery whose batched attempt 1 ended FAILED (endpoint disabled): review window, then a new cycle', async () => {
    const w = await stubs('resume-failed', { attempt: () => 'delivered' });
    const handle = await start(w, { priorAttempts: 1, resume: { status: 'FAILED', nextAttemptAt: null } });
    expect(await handle.query(deliveryStatusQuery)).toMatchObject({ status: 'FAILED', attemptCount: 1 });
    expect(w.callsOf('attemptDelivery')).toEqual([]);
    await handle.signal(retryNowSignal, { operator: 'test' });
    const result = await server.env.client.workflow.getHandle(handle.workflowId).result(); // the continued run
    expect(result).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect(attemptNumbers(w)).toEqual([2]);
    expect(w.callsOf('reopenDelivery')).toHaveLength(1);
  });
});
