// R20: the seal of a reconciliation's `continued` block (src/inbound/continuation-seal.ts) and the receipt comparison
// (src/inbound/receipt-match.ts): a block verifies only for the workflow and run it was sealed for, any change to it
// fails, and an event differs from its receipt in exactly the fields that were changed.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sealContinuation, verifyContinuation } from '../../src/inbound/continuation-seal.js';
import { eventMismatch } from '../../src/inbound/receipt-match.js';
import type { ContinuedReconciliation, NormalizedProviderEvent } from '../../src/shared/inbound.js';

const key = randomBytes(32);
const scope = { workflowId: 'reconcile:sandbox-stripe:evt_1', runId: 'run-1' };
const block: ContinuedReconciliation = {
  deadline: 1_800_000_000_000,
  delayMs: 1600,
  providerQueries: 4,
  provisionalPosted: false,
  providerPayment: { reference: 'pi_1', status: 'pending', amountMinor: '1000', currency: 'EUR' },
};

describe('R20 the continued block is accepted only if the workflow sealed it', () => {
  it('R20 a sealed block verifies for its workflow and run, and not for another run, workflow or key', () => {
    const seal = sealContinuation(key, scope, block);
    expect(verifyContinuation(key, scope, { ...block, seal })).toBe(true);
    expect(verifyContinuation(key, { ...scope, runId: 'run-2' }, { ...block, seal })).toBe(false);
    expect(verifyContinuation(key, { ...scope, workflowId: 'reconcile:sandbox-stripe:evt_2' }, { ...block, seal })).toBe(false);
    expect(verifyContinuation(randomBytes(32), scope, { ...block, seal })).toBe(false);
    expect(verifyContinuation(key, null, { ...block, seal })).toBe(false);
    expect(verifyContinuation(key, scope, block)).toBe(false);
  });

  it('R20 property: any change to the provider answer or the loop state breaks the seal', () => {
    const seal = sealContinuation(key, scope, block);
    fc.assert(
      fc.property(
        fc.record({
          amountMinor: fc.bigInt({ min: 1n, max: 10n ** 12n }).map(String),
          providerQueries: fc.nat(1000),
          provisionalPosted: fc.boolean(),
        }),
        (change) => {
          const forged: ContinuedReconciliation = {
            ...block,
            providerQueries: change.providerQueries,
            provisionalPosted: change.provisionalPosted,
            providerPayment: { ...block.providerPayment!, amountMinor: change.amountMinor },
            seal,
          };
          const same = change.amountMinor === '1000' && change.providerQueries === 4 && !change.provisionalPosted;
          expect(verifyContinuation(key, scope, forged)).toBe(same);
        },
      ),
    );
  });
});

describe('R20 an event is the one its receipt holds', () => {
  const receipt: NormalizedProviderEvent = {
    providerEventId: 'evt_1',
    type: 'payment.succeeded',
    paymentReference: 'pi_1',
    amountMinor: '1000',
    currency: 'EUR',
    effectiveAt: '2026-12-01T00:00:00.000Z',
  };
  it('R20 the same event (the time in another ISO spelling) matches; each changed field is named', () => {
    expect(eventMismatch(receipt, { ...receipt, effectiveAt: '2026-12-01T00:00:00Z' })).toEqual([]);
    expect(eventMismatch(receipt, { ...receipt, amountMinor: '900000000', paymentReference: 'pi_2' })).toEqual([
      'paymentReference',
      'amountMinor',
    ]);
    expect(eventMismatch(receipt, { ...receipt, providerObjectId: 're_1' })).toEqual(['providerObjectId']);
    expect(eventMismatch(receipt, { ...receipt, extra: 1 })).toEqual(['extra']);
    expect(eventMismatch(receipt, null)).toEqual(['event']);
  });
});
