// C5: the static summaries the Temporal UI lists: readable, and within Temporal's 200-byte limit.
import { describe, expect, it } from 'vitest';
import { buildReconciliationStart } from '../../src/inbound/start.js';
import { clampSummary, deliverySummary } from '../../src/shared/workflow-summary.js';

describe('C5 workflow summaries', () => {
  it('C5 a reconciliation starts with currency, amount, payment reference, provider and event type', () => {
    const start = buildReconciliationStart(
      {
        provider: 'sandbox-stripe',
        receiptId: 1,
        acknowledgedAt: '2026-12-01T00:00:00Z',
        event: {
          providerEventId: 'evt_1',
          type: 'payment.succeeded',
          paymentReference: 'pi_3Q',
          amountMinor: '1999',
          currency: 'EUR',
          effectiveAt: '2026-12-01T00:00:00Z',
        },
      },
      'q',
    );
    expect(start.staticSummary).toBe('EUR 19.99 · pi_3Q · sandbox-stripe · payment.succeeded');
  });

  it.each([
    [
      { deliveryId: 'whd_1', endpointId: 'we_1', eventType: 'payment.succeeded', note: 'attempt 1' },
      'payment.succeeded → we_1 · attempt 1',
    ],
    [{ deliveryId: 'whd_1', endpointId: 'we_1', note: 'operator retry' }, 'whd_1 → we_1 · operator retry'],
    [{ deliveryId: 'whd_1', note: 'operator retry' }, 'whd_1 · operator retry'],
  ])('C5 delivery %j → %s', (input, expected) => expect(deliverySummary(input)).toBe(expected));

  it('C5 a long summary is cut on a character boundary within 200 bytes', () => {
    for (const text of ['x'.repeat(500), 'é'.repeat(150), '€'.repeat(100)]) {
      const out = clampSummary(text);
      expect(Buffer.byteLength(out, 'utf8')).toBeLessThanOrEqual(200);
      expect(out.endsWith('…')).toBe(true);
      expect(out).not.toContain('\uFFFD');
    }
    expect(clampSummary('short')).toBe('short');
  });
});
