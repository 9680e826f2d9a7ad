// R13 on the real PostgreSQL: the step journal as a local step of a reconciliation sees it (MockActivityEnvironment
// gives the activity the info Temporal would: local, the workflow's id and run, the step's sequence number). A re-run
// of the same step answers from the first durable answer (a result, or a final failure); a retryable failure is not
// kept; another activity under the same number is refused; a delivery's or a regular activity's call passes through;
// the prune deletes only answers older than the retention.
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStepJournal, STEP_RESULT_RETENTION_DAYS } from '../../src/activities/step-journal.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { workflowStepResults } from '../../src/db/schema/index.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { testLogger } from '../helpers/temporal.js';

let database: Database;
beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
});
afterAll(async () => {
  await database?.close();
});

function stepOf(activityType: string, step = '3', workflowType = 'reconciliationWorkflow') {
  const workflowId = `reconcile:journal-test:${randomUUID()}`;
  const runId = randomUUID();
  const env = () =>
    new MockActivityEnvironment({
      isLocal: true,
      activityId: step,
      activityType,
      workflowType,
      workflowExecution: { workflowId, runId },
    });
  return { workflowId, runId, env };
}

describe('R13 the step journal', () => {
  it('a re-run of a step answers its first durable answer, without running the step again', async () => {
    const journal = createStepJournal({ db: database.db, logger: testLogger });
    let answers = ['succeeded', 'failed'];
    let calls = 0;
    const steps = journal.wrap({
      queryProviderPayment: async () => {
        calls += 1;
        return { outcome: 'found', status: answers.shift() };
      },
    });
    const { env } = stepOf('queryProviderPayment');
    expect(await env().run(steps.queryProviderPayment)).toEqual({ outcome: 'found', status: 'succeeded' });
    expect(await env().run(steps.queryProviderPayment)).toEqual({ outcome: 'found', status: 'succeeded' });
    expect(calls).toBe(1);
    answers = ['other'];
    const other = stepOf('queryProviderPayment'); // another run: its own answers
    expect(await other.env().run(steps.queryProviderPayment)).toEqual({ outcome: 'found', status: 'other' });
  });

  it('a final failure is kept and thrown again; a retryable one is not kept (the SDK retries the step)', async () => {
    const journal = createStepJournal({ db: database.db, logger: testLogger });
    let throwRetryable = true;
    let posted = 0;
    const steps = journal.wrap({
      postLedgerTransaction: async () => {
        if (throwRetryable) throw ApplicationFailure.retryable('database unavailable', 'DatabaseUnavailable');
        posted += 1;
        throw ApplicationFailure.nonRetryable('reversal exceeds the settled amount', 'ReversalExceedsSettledError');
      },
    });
    const { env, workflowId } = stepOf('postLedgerTransaction');
    await expect(env().run(steps.postLedgerTransaction)).rejects.toMatchObject({ type: 'DatabaseUnavailable' });
    expect(await database.db.select().from(workflowStepResults).where(eq(workflowStepResults.workflowId, workflowId))).toEqual(
      [],
    );
    throwRetryable = false;
    await expect(env().run(steps.postLedgerTransaction)).rejects.toMatchObject({
      type: 'ReversalExceedsSettledError',
      nonRetryable: true,
    });
    await expect(env().run(steps.postLedgerTransaction)).rejects.toMatchObject({
      type: 'ReversalExceedsSettledError',
      nonRetryable: true,
    });
    expect(posted).toBe(1);
  });

  it('any failure of a one-try step (the provider query) is kept: the workflow acted on it', async () => {
    const journal = createStepJournal({ db: database.db, logger: testLogger });
    let failing = true;
    const steps = journal.wrap({
      queryProviderPayment: async () => {
        if (failing) throw ApplicationFailure.retryable('provider timed out', 'Timeout');
        return { outcome: 'found' };
      },
    });
    const { env } = stepOf('queryProviderPayment');
    await expect(env().run(steps.queryProviderPayment)).rejects.toMatchObject({ type: 'Timeout' });
    failing = false;
    await expect(env().run(steps.queryProviderPayment)).rejects.toMatchObject({ type: 'Timeout' });
  });

  it('another activity under a kept step number is refused; deliveries and regular activities pass through', async () => {
    const journal = createStepJournal({ db: database.db, logger: testLogger });
    let count = 0;
    const steps = journal.wrap({ ledgerPosition: async () => ++count, attemptDelivery: async () => ++count });
    const { workflowId, runId } = stepOf('ledgerPosition');
    const at = (activityType: string) =>
      new MockActivityEnvironment({
        isLocal: true,
        activityId: '5',
        activityType,
        workflowType: 'reconciliationWorkflow',
        workflowExecution: { workflowId, runId },
      });
    expect(await at('ledgerPosition').run(steps.ledgerPosition)).toBe(1);
    await expect(at('attemptDelivery').run(steps.attemptDelivery)).rejects.toMatchObject({ type: 'StepJournalMismatch' });
    const delivery = stepOf('attemptDelivery', '1', 'deliveryWorkflow');
    expect(await delivery.env().run(steps.attemptDelivery)).toBe(2);
    expect(await delivery.env().run(steps.attemptDelivery)).toBe(3);
    const regular = new MockActivityEnvironment({
      isLocal: false,
      activityType: 'ledgerPosition',
      workflowType: 'reconciliationWorkflow',
      workflowExecution: { workflowId, runId },
    });
    expect(await regular.run(steps.ledgerPosition)).toBe(4);
  });

  it(`the prune deletes answers older than ${STEP_RESULT_RETENTION_DAYS} days and keeps the others`, async () => {
    const journal = createStepJournal({ db: database.db, logger: testLogger });
    const workflowId = `reconcile:journal-prune:${randomUUID()}`;
    const old = new Date(Date.now() - (STEP_RESULT_RETENTION_DAYS + 1) * 86_400_000);
    await database.db.insert(workflowStepResults).values([
      { workflowId, runId: 'r', step: '1', activity: 'queryProviderPayment', outcome: 'result', value: null, recordedAt: old },
      { workflowId, runId: 'r', step: '2', activity: 'queryProviderPayment', outcome: 'result', value: null },
    ]);
    while ((await journal.prune(1000)) > 0);
    const left = await database.db.select().from(workflowStepResults).where(eq(workflowStepResults.workflowId, workflowId));
    expect(left.map((r) => r.step)).toEqual(['2']);
  });
});
