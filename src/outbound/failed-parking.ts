// P23: a first attempt the batched steps (./first-attempts.ts: the dispatcher's, and the probe's release) recorded as
// failed, to an endpoint that parks (./circuit.ts `parks`: its circuit open, a backlog parked, its ramp running), is
// parked at once: RETRYING after attempt 1, parked_since set, and no workflow. It keeps the P1 hand-off marker
// (handoff_since), which on a parked row says "no workflow yet: the endpoint's probe owns it" (the hand-off sweep
// leaves parked rows to the probe). The probe's release starts its workflow from the row (signalWithStart, as for any
// parked retry, P15) and sends the released attempt at once; the probe's expiry fails it in SQL like a parked fan-out
// (./parking-store.ts). Before P23 each such failure started a workflow that woke at its first retry only to park:
// at an outage's onset ~30 at once (bench:outage), and one more for every failed probe.
import type { Sql } from 'postgres';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import { failedAttemptsParked } from '../metrics/outbound.js';
import type { EndpointOrdering } from '../shared/outbound.js';
import { parks, type CircuitSettings } from './circuit.js';
import type { DeliveryToStart, StartOptions } from './delivery-start.js';
import { createProbeStarter } from './probe-start.js';
import type { RecoverySettings } from './recovery.js';

/** What `parks` reads of an endpoint, with whether deliveries wait parked for it. */
export interface ParkingEndpoint {
  consecutiveFailures: number;
  failingSince: Date | null;
  ordering: EndpointOrdering;
  recoveringSince: Date | null;
  ownRate: number | null;
  hasParked: boolean;
}

/**
 * The deliveries of `workflows` to park instead of starting their workflow: those a failed first attempt left
 * RETRYING (a start resuming after attempt 1) whose endpoint parks now. Pure (test/unit/failed-parking.test.ts).
 */
export function toPark(
  workflows: DeliveryToStart[],
  endpoints: Map<string, ParkingEndpoint>,
  settings: { circuit: CircuitSettings; recovery: RecoverySettings },
  now: number,
): DeliveryToStart[] {
  return workflows.filter((d) => {
    if (d.resume?.status !== 'RETRYING' || d.priorAttempts !== 1) return false;
    const endpoint = endpoints.get(d.endpointId);
    return endpoint !== undefined && parks(endpoint, settings.circuit, settings.recovery, now);
  });
}

const date = (v: string | Date | null) => (v === null ? null : new Date(v));

export function createFailedParking(deps: { db: Db; start: StartOptions; logger: Logger }) {
  const client = (deps.db as unknown as { $client: Sql }).$client;
  const { circuit, recovery } = deps.start.profile.outbound;
  const probes = createProbeStarter(deps.start.temporal, deps.start.taskQueue, deps.start.profile);

  async function endpointsOf(endpointIds: string[]): Promise<Map<string, ParkingEndpoint>> {
    const rows = await client<
      {
        id: string;
        consecutive_failures: number;
        failing_since: string | Date | null;
        ordering: EndpointOrdering;
        recovering_since: string | Date | null;
        rate_limit_per_second: number | null;
        has_parked: boolean;
      }[]
    >`
      select w.id, w.consecutive_failures, w.failing_since, w.ordering, w.recovering_since, w.rate_limit_per_second,
             exists (select 1 from deliveries p where p.endpoint_id = w.id and p.parked_since is not null) as has_parked
        from webhook_endpoints w where w.id = any(${endpointIds}::text[])`;
    return new Map(
      rows.map((r) => [
        r.id,
        {
          consecutiveFailures: r.consecutive_failures,
          failingSince: date(r.failing_since),
          ordering: r.ordering,
          recoveringSince: date(r.recovering_since),
          ownRate: r.rate_limit_per_second,
          hasParked: r.has_parked,
        },
      ]),
    );
  }

  /**
   * Parks what `toPark` picks and makes sure the endpoints' probes run; resolves to the workflows still to start.
   * Only a row still RETRYING, unparked and carrying the hand-off marker (so no workflow has it) is parked.
   */
  return async function parkOrStart(workflows: DeliveryToStart[]): Promise<DeliveryToStart[]> {
    if (circuit.open_after_failures <= 0) return workflows;
    const retrying = workflows.filter((d) => d.resume?.status === 'RETRYING' && d.priorAttempts === 1);
    if (retrying.length === 0) return workflows;
    const endpoints = await endpointsOf([...new Set(retrying.map((d) => d.endpointId))]);
    const candidates = toPark(retrying, endpoints, { circuit, recovery }, Date.now());
    if (candidates.length === 0) return workflows;
    const rows = await client<{ id: string; endpoint_id: string }[]>`
      update deliveries set parked_since = clock_timestamp(), next_attempt_at = null, updated_at = clock_timestamp()
       where id = any(${candidates.map((d) => d.deliveryId)}::text[]) and status = 'RETRYING' and attempt_count = 1
         and parked_since is null and handoff_since is not null
      returning id, endpoint_id`;
    const parked = new Set(rows.map((r) => r.id));
    failedAttemptsParked.inc(parked.size);
    // The hand-off sweep starts the probe of an endpoint whose rows stay parked past the grace, should this fail.
    await probes
      .ensure([...new Set(rows.map((r) => r.endpoint_id))])
      .catch((error: Error) => deps.logger.warn({ error: error.name }, 'P23: probe start failed; the hand-off sweep starts it'));
    return workflows.filter((d) => !parked.has(d.deliveryId));
  };
}
