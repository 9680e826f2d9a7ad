// P1: which deliveries the batched dispatcher may send itself. Everything else gets the per-delivery workflow from
// attempt 1, whatever outbound.delivery_mode says.
import type { EndpointStatus } from '../shared/outbound.js';

export interface BatchableEndpoint {
  id: string;
  url: string;
  status: EndpointStatus;
}

/**
 * True for now for every enabled endpoint. Endpoints that need ordering, a throttle or the slow lane (per-endpoint
 * settings being added beside this mode) must answer false here: the batched path sends a Kafka batch's first
 * attempts in parallel and holds the batch's offsets until they are answered, so it neither orders nor throttles.
 */
export function isBatchable(endpoint: BatchableEndpoint): boolean {
  return endpoint.status === 'enabled';
}
