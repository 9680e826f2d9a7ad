// R20: workflows trust the database, not their input. Each attack starts a workflow straight on Temporal, as an
// operator with the Temporal UI or `temporal workflow start` could: a reconciliation's start input copied from a real
// history and changed (another event, 900000000 EUR, provisional access switched on), a forged `continued` block,
// a start reusing a closed reconciliation's id, and delivery starts that name a delivery they are not. Each must end
// visibly (the workflow fails with ReconciliationStartRefused / DeliveryStartRefused, or changes nothing) and post
// nothing: no ledger transaction, no projection written or overwritten, no POST to the merchant, no audit row.
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, deliveryAttempts, reconciliations } from '../../src/db/schema/index.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { RECONCILIATION_WORKFLOW, type ReconciliationWorkflowInput } from '../../src/shared/inbound.js';
import { DELIVERY_WORKFLOW, type DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import {
  ledgerRowsFor,
  providerEvent,
  startPaymentsPeer,
  startReconciliation,
  succeeded,
  uniqueRef,
  waitFor,
  writeReceipt,
} from '../helpers/reconciliation.js';
import { useWorld } from '../helpers/world.js';

let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let profile: ReturnType<typeof testProfile>;
const PROVIDER = 'sandbox-stripe';
const FORGED_AMOUNT = '900000000';

beforeAll(async () => {
  peer = await startPaymentsPeer();
  profile = testProfile({
    inbound: {
      providers: { [PROVIDER]: { api_base_url: peer.baseUrl } },
      provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '500ms' },
      reconciliation_timeout: '3s',
      allow_provisional_access: false,
    },
  });
});
// The worker runs the profile above: no provisional access, a 3 s timeout.
const world = useWorld({
  label: 'forged-starts',
  workers: {
    get profile() {
      return profile;
    },
  },
});
afterAll(async () => {
  await peer?.close();
});

const open: WorkflowHandle[] = [];
afterAll(async () => {
  for (const handle of open) await handle.terminate('test done').catch(() => {});
});

type Outcome = { completed: unknown } | { failed: unknown } | 'still running';
/** How the run ended within `ms`, or 'still running' (then it is terminated after the file). */
async function outcomeOf(handle: WorkflowHandle, ms = 20_000): Promise<Outcome> {
  open.push(handle);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
  const ended = handle.result().then(
    (completed) => ({ completed }),
    (failed) => ({ failed }),
  );
  try {
    return await Promise.race([ended, late]);
  } finally {
    clearTimeout(timer);
  }
}

function expectRefused(outcome: Outcome, type: string, message: RegExp): void {
  expect(outcome).toHaveProperty('failed');
  const error = (outcome as { failed: WorkflowFailedError }).failed;
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = error.cause as { type?: string; message?: string } | undefined;
  expect(cause?.type).toBe(type);
  expect(cause?.message).toMatch(message);
}

/** Audit rows that name any of `ids` (as target, or anywhere in before/after): a refused start writes none. */
async function auditNaming(...ids: string[]): Promise<number> {
  const rows = await world.db
    .select({ id: auditEvents.id })
    .from(auditEvents)
    .where(
      sql.join(
        ids.map(
          (id) =>
            sql`(${auditEvents.targetId} = ${id} or coalesce(${auditEvents.before}::text, '') like ${`%${id}%`} or coalesce(${auditEvents.after}::text, '') like ${`%${id}%`})`,
        ),
        sql` or `,
      ),
    );
  return rows.length;
}

const projectionOf = async (id: string) => (await world.db.select().from(reconciliations).where(eq(reconciliations.id, id)))[0];

/** A real reconciliation, applied, and the start input its history recorded (what an operator can copy). */
async function genuineApplied() {
  const event = providerEvent();
  peer.set(event.paymentReference, succeeded(event));
  const handle = await startReconciliation(world.temporal.client, profile, world.taskQueues.reconciliation, event);
  expect(((await handle.result()) as { state: string }).state).toBe('applied');
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = JSON.parse(Buffer.from(payload!.data!).toString()) as ReconciliationWorkflowInput;
  return { event, handle, input };
}

function startForged(
  input: ReconciliationWorkflowInput,
  workflowId = reconciliationWorkflowId(input.provider, input.event.providerEventId),
) {
  return world.temporal.client.workflow.start(RECONCILIATION_WORKFLOW, {
    workflowId,
    taskQueue: world.taskQueues.reconciliation,
    args: [input],
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  });
}

describe('R20 a reconciliation trusts its receipt, not its start input', () => {
  it('R20 a copied input with another event, 900000000 EUR and provisional access on, and no receipt, is refused and posts nothing', async () => {
    const { input } = await genuineApplied();
    const reference = uniqueRef('forged');
    // The provider has not settled it yet: with provisional access the old run credited 9,000,000.00 EUR at once.
    peer.set(reference, { reference, status: 'pending', amountMinor: FORGED_AMOUNT, currency: 'EUR' });
    const forged: ReconciliationWorkflowInput = {
      ...input,
      event: {
        ...input.event,
        providerEventId: `evt_forged_${randomUUID()}`,
        paymentReference: reference,
        amountMinor: FORGED_AMOUNT,
      },
      settings: { ...input.settings!, allowProvisionalAccess: true },
    };
    const handle = await startForged(forged);
    expectRefused(await outcomeOf(handle), 'ReconciliationStartRefused', /no receipt/);
    expect(await ledgerRowsFor(world.db, reference)).toEqual([]);
    expect(await projectionOf(handle.workflowId)).toBeUndefined();
    expect(await auditNaming(handle.workflowId, reference, forged.event.providerEventId)).toBe(0);
  });

  it('R20 an event that differs from its receipt (the amount) is refused, naming the field, and posts nothing', async () => {
    const event = providerEvent();
    const receipt = await writeReceipt(world.db, profile, PROVIDER, event);
    peer.set(event.paymentReference, succeeded(event, { amountMinor: FORGED_AMOUNT }));
    const handle = await startForged({
      provider: PROVIDER,
      receiptId: receipt.receiptId,
      event: { ...receipt.event, amountMinor: FORGED_AMOUNT },
      acknowledgedAt: new Date().toISOString(),
    } as ReconciliationWorkflowInput);
    expectRefused(await outcomeOf(handle), 'ReconciliationStartRefused', /amountMinor/);
    expect(await ledgerRowsFor(world.db, event.paymentReference)).toEqual([]);
    expect(await projectionOf(handle.workflowId)).toBeUndefined();
    expect(await auditNaming(handle.workflowId, event.paymentReference)).toBe(0);
  });

  it("R20 settings in the start input are ignored: provisional access stays the worker profile's (off)", async () => {
    const event = providerEvent();
    const receipt = await writeReceipt(world.db, profile, PROVIDER, event);
    peer.set(event.paymentReference, succeeded(event, { status: 'pending' }));
    const { input } = await genuineApplied();
    const handle = await startForged({
      ...input,
      receiptId: receipt.receiptId,
      event: receipt.event,
      settings: { ...input.settings!, allowProvisionalAccess: true, timeoutMs: 3_000 },
    });
    open.push(handle);
    // The worker's 3 s timeout parks it in manual_review; nothing provisional was ever posted.
    await waitFor(async () => (await projectionOf(handle.workflowId))?.state === 'manual_review', 30_000, 'manual_review');
    expect(peer.hits(event.paymentReference)).toBeGreaterThan(1);
    expect(await ledgerRowsFor(world.db, event.paymentReference)).toEqual([]);
  });

  it('R20 a forged `continued` block (a provider answer of 900000000 EUR) is refused before anything is written', async () => {
    const event = providerEvent();
    const receipt = await writeReceipt(world.db, profile, PROVIDER, event);
    peer.set(event.paymentReference, 'error');
    const handle = await startForged({
      provider: PROVIDER,
      receiptId: receipt.receiptId,
      event: receipt.event,
      acknowledgedAt: new Date().toISOString(),
      continued: {
        deadline: Date.now() + 2_000,
        delayMs: 200,
        providerQueries: 1,
        provisionalPosted: false,
        providerPayment: { reference: event.paymentReference, status: 'succeeded', amountMinor: FORGED_AMOUNT, currency: 'EUR' },
      },
    } as ReconciliationWorkflowInput);
    expectRefused(await outcomeOf(handle), 'ReconciliationStartRefused', /continued/);
    expect(await projectionOf(handle.workflowId)).toBeUndefined();
    expect(await ledgerRowsFor(world.db, event.paymentReference)).toEqual([]);
    expect(await auditNaming(handle.workflowId, event.paymentReference)).toBe(0);
  });

  it("R20 a start reusing a closed reconciliation's id changes nothing: projection and ledger stay as they were", async () => {
    const { event, input, handle: first } = await genuineApplied();
    const before = await projectionOf(first.workflowId);
    const ledgerBefore = await ledgerRowsFor(world.db, event.paymentReference);
    expect(ledgerBefore).toHaveLength(1);
    const auditBefore = await auditNaming(first.workflowId, event.paymentReference);
    // The provider now says failed: a second run would have overwritten the projection on its way to rejected.
    peer.set(event.paymentReference, succeeded(event, { status: 'failed' }));
    const again = await startForged(input, first.workflowId);
    expectRefused(await outcomeOf(again), 'ReconciliationStartRefused', /already/);
    expect(await projectionOf(first.workflowId)).toEqual(before);
    expect(await ledgerRowsFor(world.db, event.paymentReference)).toEqual(ledgerBefore);
    expect(await auditNaming(first.workflowId, event.paymentReference)).toBe(auditBefore);
  });
});

describe('R20 a delivery trusts its row, not its start input', () => {
  async function deliveredOnce() {
    const receiver = await startReceiver();
    const merchantAccount = uniqueMerchant('forged');
    const endpoint = await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/hooks` });
    const { deliveryId } = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount });
    const input: DeliveryWorkflowInput = { deliveryId, retryScheduleMs: [1_000], priorAttempts: 0, reviewWindowMs: 1_000 };
    const handle = await world.temporal.client.workflow.start(DELIVERY_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: deliveryId,
      args: [input],
    });
    expect(await handle.result()).toMatchObject({ status: 'DELIVERED' });
    expect(receiver.received).toHaveLength(1);
    return { receiver, deliveryId };
  }
  const attemptsOf = async (deliveryId: string) =>
    (await world.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId))).length;

  it('R20 a start under another workflow id for a delivered delivery, past its attempts, is refused and POSTs nothing', async () => {
    const { receiver, deliveryId } = await deliveredOnce();
    const handle = await world.temporal.client.workflow.start(DELIVERY_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: `forged-${randomUUID()}`,
      args: [{ deliveryId, retryScheduleMs: [], priorAttempts: 57 } satisfies DeliveryWorkflowInput],
    });
    expectRefused(await outcomeOf(handle), 'DeliveryStartRefused', /workflow id/);
    expect(receiver.received).toHaveLength(1);
    expect(await attemptsOf(deliveryId)).toBe(1);
    expect(await auditNaming(deliveryId, handle.workflowId)).toBe(0);
    await receiver.close();
  });

  it("R20 a start reusing a delivered delivery's id with a made-up attempt count POSTs nothing", async () => {
    const { receiver, deliveryId } = await deliveredOnce();
    const handle = await world.temporal.client.workflow.start(DELIVERY_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: deliveryId,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      args: [{ deliveryId, retryScheduleMs: [], priorAttempts: 57 } satisfies DeliveryWorkflowInput],
    });
    expectRefused(await outcomeOf(handle), 'DeliveryStartRefused', /attempt/);
    expect(receiver.received).toHaveLength(1);
    expect(await attemptsOf(deliveryId)).toBe(1);
    expect(await auditNaming(deliveryId)).toBe(0);
    await receiver.close();
  });

  it('P20/R20 a start shaped like a batched retry (resume RETRYING, due at once, in a start delay) for a delivered delivery POSTs nothing', async () => {
    const { receiver, deliveryId } = await deliveredOnce();
    const handle = await world.temporal.client.workflow.start(DELIVERY_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: deliveryId,
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      startDelay: 1_000,
      args: [
        {
          deliveryId,
          retryScheduleMs: [1_000],
          priorAttempts: 1,
          resume: { status: 'RETRYING', nextAttemptAt: 0 },
        } satisfies DeliveryWorkflowInput,
      ],
    });
    await outcomeOf(handle);
    expect(receiver.received).toHaveLength(1);
    expect(await attemptsOf(deliveryId)).toBe(1);
    expect(await auditNaming(deliveryId)).toBe(0);
    await receiver.close();
  });

  it('R20 a start for a delivery that does not exist is refused at once', async () => {
    const deliveryId = `whd_forged_${randomUUID().replaceAll('-', '')}`;
    const handle = await world.temporal.client.workflow.start(DELIVERY_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: deliveryId,
      args: [{ deliveryId, retryScheduleMs: [], priorAttempts: 0, reviewWindowMs: 60_000 } satisfies DeliveryWorkflowInput],
    });
    expectRefused(await outcomeOf(handle), 'DeliveryStartRefused', /no delivery/);
    expect(await auditNaming(deliveryId)).toBe(0);
  });
});
