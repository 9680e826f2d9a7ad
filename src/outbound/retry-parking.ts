// P15: a scheduled retry whose endpoint parks — its circuit is open, deliveries wait parked for it, or its recovery
// ramp runs (./circuit.ts `parks`, the rule the fan-out applies to new deliveries) — is parked instead of POSTed into
// the outage: its row is marked (parked_since; it stays RETRYING, with no next attempt), the endpoint's probe is made
// sure of, and the workflow waits for the probe's release signal (src/workflows/delivery.ts). The probe releases parked
// retries with the parked fan-outs, oldest first, at the recovery ramp's rate, so a retry's timer that falls due in an
// outage or during the return costs one row update, not a POST, and never adds to the ramp's allowance.
import type { Client } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { deliveryQueueOf } from '../shared/task-queues.js';
import { parks } from './circuit.js';
import { createParkingStore } from './parking-store.js';
import { createProbeStarter, type ProbeStarter } from './probe-start.js';

/** Where the attempt runs: its worker's Temporal client and its task queue (the probes of a slow lane's endpoints
 * run on its delivery queue's probe queue, P18). */
export interface ParkingContext {
  client: Client;
  info: { taskQueue: string };
}

export function createRetryParking(deps: { db: Db; profile: Profile }) {
  const store = createParkingStore(deps.db);
  const { circuit, recovery } = deps.profile.outbound;
  const probes = new Map<string, ProbeStarter>(); // one per delivery queue
  return {
    /**
     * Parks the RETRYING delivery when its endpoint parks, and makes sure its probe runs: 'parked' then. 'released'
     * when the probe released this attempt: the release's allowance paced it, so M5's slots do not again. An
     * attempt number already reserved is never parked: an earlier execution of this attempt reserved it (and may have
     * POSTed), so it is settled by the attempt path (O7, R3), not left in flight behind a parked row. Nor is one the
     * probe released (R20: recorded in the row before its signal; the signal alone, which anyone with Temporal access
     * can send, only wakes the workflow).
     */
    async parkIfParking(
      deliveryId: string,
      attemptNumber: number,
      at: () => ParkingContext,
      now = Date.now(),
    ): Promise<'parked' | 'released' | null> {
      const row = await store.retryColumns(deliveryId, attemptNumber);
      if (!row || row.status !== 'RETRYING') return null;
      if (row.released) return 'released';
      if (row.reserved || !parks(row, circuit, recovery, now)) return null;
      if (!(await store.parkRetry(deliveryId))) return null;
      const { client, info } = at();
      const queue = deliveryQueueOf(info.taskQueue);
      let starter = probes.get(queue);
      if (!starter) probes.set(queue, (starter = createProbeStarter(client, queue, deps.profile)));
      await starter.ensure([row.endpointId]);
      return 'parked';
    },
    /** A parked retry that is being sent after all (an operator's retry, the probe's release) is parked no more. */
    unpark: (deliveryId: string) => store.unpark([deliveryId]),
  };
}
