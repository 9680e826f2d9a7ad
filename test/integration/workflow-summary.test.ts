// C5: the Temporal UI lists each workflow with its static summary: what the dispatcher and the ingress start carries
// one, read back from the real dev server (no worker polls these queues; the workflows are terminated after).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryWorkflows } from '../../src/outbound/delivery-start.js';
import { startReconciliation } from '../../src/inbound/reconciliation-starter.js';
import { deliveryWorkflowId } from '../../src/shared/ids.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, uniqueTaskQueues, terminateWorkflows } from '../helpers/temporal.js';

let temporal: Awaited<ReturnType<typeof connectDevServer>>;
const queues = uniqueTaskQueues('summary');
const started: string[] = [];
beforeAll(async () => {
  temporal = await connectDevServer();
});
afterAll(async () => {
  await terminateWorkflows(temporal.client, started);
  await temporal?.close();
});

describe('C5 static summaries on the Temporal server', () => {
  it('C5 a delivery reads "event type → endpoint · attempt 1"; a reconciliation "currency amount · reference · provider · type"', async () => {
    const deliveryId = `whd_${randomUUID().replaceAll('-', '').slice(0, 26)}`;
    await startDeliveryWorkflows({ temporal: temporal.client, taskQueue: queues.delivery, profile: testProfile() }, [
      { deliveryId, endpointId: 'we_summary', merchantAccount: 'acct_summary', eventType: 'payment.succeeded' },
    ]);
    started.push(deliveryWorkflowId(deliveryId));
    expect(await (await temporal.client.workflow.getHandle(deliveryWorkflowId(deliveryId)).describe()).staticSummary()).toBe(
      'payment.succeeded → we_summary · attempt 1',
    );

    const provider = `summary-${randomUUID().slice(0, 8)}`;
    const event = {
      providerEventId: `evt_${randomUUID().slice(0, 8)}`,
      type: 'payment.succeeded' as const,
      paymentReference: 'pi_summary',
      amountMinor: '1999',
      currency: 'EUR',
      effectiveAt: new Date().toISOString(),
    };
    expect(
      await startReconciliation(temporal.client, queues.reconciliation, {
        provider,
        receiptId: 1,
        event,
        acknowledgedAt: new Date().toISOString(),
      }),
    ).toBe('started');
    const id = `reconcile:${provider}:${event.providerEventId}`;
    started.push(id);
    expect(await (await temporal.client.workflow.getHandle(id).describe()).staticSummary()).toBe(
      `EUR 19.99 · pi_summary · ${provider} · payment.succeeded`,
    );
  });
});
