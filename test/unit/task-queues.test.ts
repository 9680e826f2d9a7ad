// M2, P15, P18: the task-queue names derived from a delivery queue — its slow lane and its probe queue — lead back
// to it, and a probe started from any of them lands on the one probe queue of that delivery queue.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryQueueOf, probeQueue, slowLaneQueue } from '../../src/shared/task-queues.js';

const deliveryQueue = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,40}$/)
  .filter((q) => !q.endsWith('.slow-lane') && !q.endsWith('.probes'));

describe('task queues', () => {
  it('M2/P18 a slow lane and a probe queue lead back to their delivery queue, which leads to itself', () => {
    fc.assert(
      fc.property(deliveryQueue, (q) => {
        expect(deliveryQueueOf(q)).toBe(q);
        expect(deliveryQueueOf(slowLaneQueue(q))).toBe(q);
        expect(deliveryQueueOf(probeQueue(q))).toBe(q);
      }),
    );
  });

  it('P18 a delivery queue, its slow lane and its probe queue all name the same probe queue, unlike the others', () => {
    fc.assert(
      fc.property(deliveryQueue, (q) => {
        const probes = probeQueue(q);
        expect(new Set([probes, probeQueue(slowLaneQueue(q)), probeQueue(probes)])).toEqual(new Set([probes]));
        expect(new Set([q, slowLaneQueue(q), probes]).size).toBe(3);
      }),
    );
  });
});
