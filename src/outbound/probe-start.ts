// P13: starts the probe workflow of each endpoint the dispatcher just parked deliveries for (or the hand-off sweep
// found parked). The workflow id is the endpoint's (src/shared/endpoint-probe.ts) and a running one is the success
// case, so the start is idempotent; a probe that has closed (its backlog released) is started again. A start made in
// the last `memoMs` for an endpoint is not repeated: at a steady rate every batch parks for the same endpoints.
// P18: given the delivery queue, it starts the probe on that queue's probe queue (src/shared/task-queues.ts).
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import { ENDPOINT_PROBE_WORKFLOW, endpointProbeWorkflowId, type EndpointProbeInput } from '../shared/endpoint-probe.js';
import { SA } from '../shared/search-attributes.js';
import { probeQueue } from '../shared/task-queues.js';

export interface ProbeStarter {
  ensure(endpointIds: string[]): Promise<number>;
}

export function createProbeStarter(temporal: Client, deliveryQueue: string, profile: Profile, memoMs = 5000): ProbeStarter {
  const taskQueue = probeQueue(deliveryQueue);
  const recent = new Map<string, number>();
  return {
    /** Resolves to how many probes this call started (running ones count as ensured, not started). */
    async ensure(endpointIds: string[]): Promise<number> {
      const now = Date.now();
      const due = [...new Set(endpointIds)].filter((id) => (recent.get(id) ?? -Infinity) <= now - memoMs);
      let started = 0;
      await Promise.all(
        due.map(async (endpointId) => {
          const input: EndpointProbeInput = {
            endpointId,
            probeEveryMs: profile.outbound.circuit.probe_every,
            releaseTickMs: profile.outbound.circuit.release_tick,
          };
          recent.set(endpointId, now); // P24: before the RPC, so that the batches meanwhile do not start it again
          try {
            await temporal.workflow.start(ENDPOINT_PROBE_WORKFLOW, {
              taskQueue,
              workflowId: endpointProbeWorkflowId(endpointId),
              args: [input],
              workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
              staticSummary: `probe ${endpointId}: circuit open, deliveries parked`,
              typedSearchAttributes: [{ key: SA.endpointId, value: endpointId }],
            });
            started++;
          } catch (error) {
            if (error instanceof WorkflowExecutionAlreadyStartedError) return;
            recent.delete(endpointId);
            throw error;
          }
        }),
      );
      if (recent.size > 10_000) for (const [id, at] of recent) if (at <= now - memoMs) recent.delete(id);
      return started;
    },
  };
}
