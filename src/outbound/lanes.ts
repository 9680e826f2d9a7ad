// M2: which lane an attempt runs in. The normal lane is the delivery task queue's activity slots (and the local
// activities of first attempts); the slow lane is an activity task queue of its own (src/shared/task-queues.ts) with
// its own worker slots. An endpoint goes to the slow lane when it keeps failing (outbound.lanes.slow_after_failures
// consecutive failed attempts, timeouts included: a row value, so every worker agrees) or, before that is known, when
// this process already has its allowance of attempts in flight to it or one that has run slow_attempt_after.
// The activity reports the lane back to the workflow as a result, so the workflow's choice of task queue is recorded.
import type { Profile } from '../config/profile.js';
import type { EndpointOrdering } from '../shared/outbound.js';

export type LaneSettings = Profile['outbound']['lanes'];

/** The endpoint columns that decide the lane, the ordering and the throttle. */
export interface EndpointRouting {
  ordering: EndpointOrdering;
  rateLimitPerSecond: number | null;
  consecutiveFailures: number;
}

export const keepsFailing = (endpoint: Pick<EndpointRouting, 'consecutiveFailures'>, lanes: LaneSettings) =>
  endpoint.consecutiveFailures >= lanes.slow_after_failures;

/**
 * M2, M3, M5: true when an endpoint's deliveries must go through the per-delivery workflow (ordering waits, throttle
 * waits and lane routing live there), i.e. not through any path that POSTs first attempts outside a workflow.
 */
export function needsDeliveryWorkflow(endpoint: EndpointRouting, lanes: LaneSettings): boolean {
  return endpoint.ordering === 'per_endpoint' || endpoint.rateLimitPerSecond !== null || keepsFailing(endpoint, lanes);
}

export interface InFlightPermit {
  /** `delivered`: the attempt got a 2xx (a quick one proves the endpoint healthy for a while). */
  release(delivered?: boolean): void;
}

/** How long a quick 2xx keeps an endpoint "proven healthy" (the larger in-flight allowance). */
const PROVEN_FOR_MS = 10_000;

/**
 * M2: the attempts this process has in flight per endpoint in the normal lane. `acquire` is synchronous, so the check
 * and the count are one step even with many activities running at once. Null = send it to the slow lane: an attempt
 * to the endpoint has been running for slow_attempt_after, or it has its allowance in flight — max_in_flight_per_endpoint
 * for an endpoint not seen answering lately, max_in_flight_proven for one whose last quick 2xx is recent (a healthy
 * endpoint with a burst must not overflow into the slow lane, where failing endpoints queue).
 */
export function createInFlightTracker(lanes: LaneSettings, clock: () => number = Date.now) {
  const open = new Map<string, Set<{ startedAt: number }>>();
  const provenAt = new Map<string, number>();
  return {
    acquire(endpointId: string): InFlightPermit | null {
      const now = clock();
      const running = open.get(endpointId) ?? new Set();
      for (const attempt of running) if (now - attempt.startedAt >= lanes.slow_attempt_after) return null;
      const proven = now - (provenAt.get(endpointId) ?? -Infinity) < PROVEN_FOR_MS;
      if (running.size >= (proven ? lanes.max_in_flight_proven : lanes.max_in_flight_per_endpoint)) return null;
      const attempt = { startedAt: now };
      running.add(attempt);
      open.set(endpointId, running);
      let released = false;
      return {
        release(delivered = false) {
          if (released) return;
          released = true;
          const at = clock();
          if (delivered && at - attempt.startedAt < lanes.slow_attempt_after) provenAt.set(endpointId, at);
          else if (!delivered) provenAt.delete(endpointId);
          running.delete(attempt);
          if (running.size === 0 && open.get(endpointId) === running) open.delete(endpointId);
        },
      };
    },
    inFlight: (endpointId: string) => open.get(endpointId)?.size ?? 0,
  };
}

export type InFlightTracker = ReturnType<typeof createInFlightTracker>;
