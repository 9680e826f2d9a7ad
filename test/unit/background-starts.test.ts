// P13: the batched dispatcher's workflow starts behind the offsets (src/dispatcher/background-starts.ts): a submit
// returns without waiting for its starts while there is room, waits once maxInHand deliveries are in hand, and a
// failed start is logged for the hand-off sweep, never thrown at the batch.
import { describe, expect, it } from 'vitest';
import { createBackgroundStarts } from '../../src/dispatcher/background-starts.js';
import type { DeliveryToStart } from '../../src/outbound/delivery-start.js';
import { createLogger } from '../../src/lib/logger.js';

const logger = createLogger('test', 'silent');
const deliveries = (n: number): DeliveryToStart[] =>
  Array.from({ length: n }, (_, i) => ({
    deliveryId: `whd_${i}`,
    endpointId: 'we_1',
    merchantAccount: 'acct',
    eventType: 'payment.succeeded',
    priorAttempts: 0,
  }));

describe('P13 background starts', () => {
  it('P13 a submit with room returns before its starts finish; past maxInHand it waits for room', async () => {
    const pending: (() => void)[] = [];
    const starts = createBackgroundStarts(() => new Promise<void>((resolve) => pending.push(resolve)), logger, 10);
    await starts.submit(deliveries(6)); // returns at once: 6 in hand
    expect(pending).toHaveLength(1);
    let second = false;
    const waiting = starts.submit(deliveries(6)).then(() => (second = true)); // 12 > 10: waits
    await new Promise((r) => setTimeout(r, 20));
    expect(second).toBe(false);
    pending[0]!();
    await waiting;
    expect(second).toBe(true);
    pending[1]!();
    await starts.drain();
  });

  it('P13 a failed start is not thrown at the batch (the sweep takes it over) and drain still resolves', async () => {
    const starts = createBackgroundStarts(() => Promise.reject(new Error('temporal unavailable')), logger, 10);
    await expect(starts.submit(deliveries(3))).resolves.toBeUndefined();
    await expect(starts.drain()).resolves.toBeUndefined();
  });
});
