// P1: which deliveries the batched dispatcher may send itself. Everything else gets the per-delivery workflow from
// attempt 1, whatever outbound.delivery_mode says.
import type { EndpointStatus } from '../shared/outbound.js';

export interface BatchableEndpoint {
  id: string;
  url: string;
  status: EndpointStatus;
}

/**
 * True for every enabled endpoint the fan-out handed to the dispatcher. Endpoints that need ordering, a throttle or
 * the slow lane are never handed over (fan-out.ts asks `needsDeliveryWorkflow`, src/outbound/lanes.ts): the batched
 * path sends a Kafka batch's first attempts in parallel and holds the batch's offsets until they are answered, so it
 * neither orders nor throttles.
 */
export function isBatchable(endpoint: BatchableEndpoint): boolean {
  return endpoint.status === 'enabled';
}
