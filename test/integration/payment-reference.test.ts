// O20: the PaymentReference search attribute — set at start on reconciliations (the provider's payment reference)
// and on deliveries whose event names a payment — on the real dev server: the workflow carries it and a visibility
// query by payment reference finds it, as the Temporal UI's search does.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../src/outbound/envelope.js';
import { startDeliveryWorkflows } from '../../src/outbound/delivery-start.js';
import { buildReconciliationStart } from '../../src/inbound/start.js';
import { SA } from '../../src/shared/search-attributes.js';
import { envelope, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { connectDevServer, terminateWorkflows } from '../helpers/temporal.js';

let temporal: Awaited<ReturnType<typeof connectDevServer>>;
const started: string[] = [];
beforeAll(async () => {
  temporal = await connectDevServer();
});
afterAll(async () => {
  await terminateWorkflows(temporal.client, started);
  await temporal.close();
});

const unpolled = `payment-ref-unpolled-${randomUUID().slice(0, 8)}`;

describe('O20 PaymentReference search attribute', () => {
  it('O20 a delivery of an event about a payment carries its reference, and a visibility query finds it', async () => {
    const reference = `pay_${randomUUID().slice(0, 12)}`;
    const env = {
      ...envelope({ merchantAccount: uniqueMerchant('payref') }),
      data: { object: { id: reference, object: 'payment', amount: 100 } },
    };
    const parsed = parseEnvelope(Buffer.from(JSON.stringify(env)));
    expect(parsed.ok && parsed.event.paymentReference).toBe(reference);
    const deliveryId = `whd_${randomUUID().replaceAll('-', '')}`;
    started.push(deliveryId);
    await startDeliveryWorkflows({ temporal: temporal.client, taskQueue: unpolled, profile: testProfile() }, [
      { deliveryId, endpointId: 'we_x', merchantAccount: 'acct_x', eventType: 'payment.succeeded', paymentReference: reference },
    ]);
    const description = await temporal.client.workflow.getHandle(deliveryId).describe();
    expect(description.typedSearchAttributes.get(SA.paymentReference)).toBe(reference);
    const found = await waitFor(
      async () => {
        const ids: string[] = [];
        for await (const w of temporal.client.workflow.list({ query: `PaymentReference = '${reference}'` }))
          ids.push(w.workflowId);
        return ids.length > 0 ? ids : undefined;
      },
      15_000,
      'visible by PaymentReference',
    );
    expect(found).toEqual([deliveryId]);
  });

  it('O20 a reconciliation starts with the provider payment reference; an event without one sets none', async () => {
    const reference = `pi_${randomUUID().slice(0, 12)}`;
    const start = buildReconciliationStart(
      {
        provider: 'sandbox-stripe',
        receiptId: 1,
        acknowledgedAt: '2026-12-01T00:00:00Z',
        event: {
          providerEventId: `evt_${randomUUID().slice(0, 8)}`,
          type: 'payment.succeeded',
          paymentReference: reference,
          amountMinor: '1999',
          currency: 'EUR',
          effectiveAt: '2026-12-01T00:00:00Z',
        },
      },
      unpolled,
    );
    started.push(start.workflowId);
    const handle = await temporal.client.workflow.start('reconciliationWorkflow', start);
    expect((await handle.describe()).typedSearchAttributes.get(SA.paymentReference)).toBe(reference);
    const plain = parseEnvelope(
      Buffer.from(
        JSON.stringify({ ...envelope({ merchantAccount: 'acct_y' }), data: { object: { id: 'cus_1', object: 'customer' } } }),
      ),
    );
    expect(plain.ok && plain.event.paymentReference).toBeUndefined();
  });
});
