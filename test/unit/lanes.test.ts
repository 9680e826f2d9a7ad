// M2: the in-flight allowance per endpoint that sends attempts to the slow lane, and the predicate that keeps
// ordered, throttled and failing endpoints on the per-delivery workflow.
import { describe, expect, it } from 'vitest';
import { createInFlightTracker, needsDeliveryWorkflow } from '../../src/outbound/lanes.js';

const lanes = { slow_after_failures: 3, max_in_flight_per_endpoint: 2, max_in_flight_proven: 4, slow_attempt_after: 1000 };

describe('M2 in-flight allowance', () => {
  it('M2 an endpoint not seen answering gets max_in_flight_per_endpoint, others are not affected', () => {
    let now = 0;
    const tracker = createInFlightTracker(lanes, () => now);
    const a = [tracker.acquire('we_a'), tracker.acquire('we_a')];
    expect(a.every(Boolean)).toBe(true);
    expect(tracker.acquire('we_a')).toBeNull();
    expect(tracker.acquire('we_b')).not.toBeNull();
    a[0]!.release();
    now = 10;
    expect(tracker.acquire('we_a')).not.toBeNull();
  });

  it('M2 an attempt running for slow_attempt_after sends the next ones to the slow lane until it ends', () => {
    let now = 0;
    const tracker = createInFlightTracker(lanes, () => now);
    const hanging = tracker.acquire('we_a')!;
    now = 999;
    expect(tracker.acquire('we_a')).not.toBeNull();
    now = 1000;
    expect(tracker.acquire('we_a')).toBeNull();
    hanging.release(false);
    expect(tracker.inFlight('we_a')).toBe(1);
  });

  it('M2 a quick 2xx proves the endpoint for a while: a burst gets max_in_flight_proven', () => {
    let now = 0;
    const tracker = createInFlightTracker(lanes, () => now);
    const first = tracker.acquire('we_a')!;
    now = 5;
    first.release(true);
    const burst = Array.from({ length: 5 }, () => tracker.acquire('we_a'));
    expect(burst.filter(Boolean)).toHaveLength(4);
    for (const p of burst) p?.release(false); // a failure withdraws the proof
    expect([tracker.acquire('we_a'), tracker.acquire('we_a'), tracker.acquire('we_a')].filter(Boolean)).toHaveLength(2);
  });
});

describe('M2 M3 M5 which endpoints need the per-delivery workflow', () => {
  const plain = { ordering: 'none' as const, rateLimitPerSecond: null, consecutiveFailures: 0 };
  it('M3 M5 M2 ordered, throttled or failing endpoints do; a plain healthy one does not', () => {
    expect(needsDeliveryWorkflow(plain, lanes)).toBe(false);
    expect(needsDeliveryWorkflow({ ...plain, ordering: 'per_endpoint' }, lanes)).toBe(true);
    expect(needsDeliveryWorkflow({ ...plain, rateLimitPerSecond: 10 }, lanes)).toBe(true);
    expect(needsDeliveryWorkflow({ ...plain, consecutiveFailures: 2 }, lanes)).toBe(false);
    expect(needsDeliveryWorkflow({ ...plain, consecutiveFailures: 3 }, lanes)).toBe(true);
  });
});
