// P21 on the real PostgreSQL: the failed attempts of a batched chunk are recorded in one transaction (one commit:
// every finished attempt row carries the same xmin), with the same rows as recording each on its own would leave
// (status, next attempt, the endpoints' O13 streaks); and when one attempt is no longer in flight, nothing is written
// together and each is recorded on its own (R3), the one that is not in flight keeping what it holds.
import { eq, inArray, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveries, deliveryAttempts, webhookEndpoints } from '../../src/db/schema/index.js';
import type { AttemptOutcome } from '../../src/outbound/attempt-record.js';
import { createAttemptStore } from '../../src/outbound/attempt-store.js';
import { testLogger } from '../helpers/temporal.js';
import { insertDelivery, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'failures' });
const failure = (status: number): AttemptOutcome => ({
  succeeded: false,
  responseStatus: status,
  errorKind: 'server_error',
  errorMessage: `HTTP ${status}`,
  excerpt: 'down',
  latencyMs: 4,
});
const store = () => createAttemptStore({ db: world.db, logger: testLogger, autoDisableAfterMs: 7 * 86_400_000 });

/** `perEndpoint[i]` deliveries to endpoint i, each with attempt 1 reserved (in flight). */
async function inFlight(perEndpoint: number[]) {
  const merchantAccount = uniqueMerchant('p21');
  const items: {
    input: { deliveryId: string; attemptNumber: number; scheduledAt: number; retryInMs: number };
    attemptId: number;
    endpointId: string;
  }[] = [];
  const endpointIds: string[] = [];
  for (const n of perEndpoint) {
    const { id: endpointId } = await insertEndpoint(world.db, { merchantAccount, url: 'http://127.0.0.1:9/p21' });
    endpointIds.push(endpointId);
    for (let k = 0; k < n; k++) {
      const { deliveryId } = await insertDelivery(world.db, { endpointId, merchantAccount });
      const input = { deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 60_000 };
      const reservation = await store().reserve(input, new Date());
      if (reservation.kind !== 'reserved') throw new Error('not reserved');
      items.push({ input, attemptId: reservation.attemptId, endpointId });
    }
  }
  return { items, endpointIds };
}
const xmins = async (attemptIds: number[]) =>
  (
    await world.db
      .select({ xmin: sql<string>`xmin::text` })
      .from(deliveryAttempts)
      .where(inArray(deliveryAttempts.id, attemptIds))
  ).map((r) => r.xmin);

describe('P21 the failures of a chunk in one transaction', () => {
  it('one commit, and the same rows as one by one (fast-check over endpoints and failures)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }), async (perEndpoint) => {
        const together = await inFlight(perEndpoint);
        const apart = await inFlight(perEndpoint);
        const applied = await store().recordFailures(together.items.map((it) => ({ ...it, outcome: failure(503) })));
        for (const it of apart.items) await store().record(it.input, it.attemptId, it.endpointId, failure(503));

        expect(applied.map((a) => a.status)).toEqual(together.items.map(() => 'RETRYING'));
        const ids = together.items.map((it) => it.attemptId);
        expect(new Set(await xmins(ids)).size, 'one transaction').toBe(1);
        const rowsOf = async (items: typeof together.items) =>
          (
            await world.db
              .select({ status: deliveries.status, attemptCount: deliveries.attemptCount, next: deliveries.nextAttemptAt })
              .from(deliveries)
              .where(
                inArray(
                  deliveries.id,
                  items.map((it) => it.input.deliveryId),
                ),
              )
          ).map((r) => [r.status, r.attemptCount, r.next !== null]);
        expect(await rowsOf(together.items)).toEqual(await rowsOf(apart.items));
        const streaks = async (endpointIds: string[]) =>
          (
            await world.db
              .select({ n: webhookEndpoints.consecutiveFailures, since: webhookEndpoints.failingSince })
              .from(webhookEndpoints)
              .where(inArray(webhookEndpoints.id, endpointIds))
          )
            .map((r) => [r.n, r.since !== null])
            .sort();
        expect(await streaks(together.endpointIds)).toEqual(await streaks(apart.endpointIds));
        expect(await streaks(together.endpointIds)).toEqual(perEndpoint.map((n) => [n, true]).sort());
      }),
      { numRuns: 8 },
    );
  });

  it('R3: when one attempt is no longer in flight, each is recorded on its own and that one keeps what it holds', async () => {
    const { items } = await inFlight([3]);
    const [kept] = items;
    await world.db.update(deliveryAttempts).set({ errorKind: 'interrupted' }).where(eq(deliveryAttempts.id, kept!.attemptId));
    const applied = await store().recordFailures(items.map((it) => ({ ...it, outcome: failure(500) })));
    expect(applied).toHaveLength(3);
    const rows = await world.db
      .select({ id: deliveryAttempts.id, status: deliveryAttempts.responseStatus, kind: deliveryAttempts.errorKind })
      .from(deliveryAttempts)
      .where(
        inArray(
          deliveryAttempts.id,
          items.map((it) => it.attemptId),
        ),
      );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(kept!.attemptId)?.kind).toBe('interrupted');
    for (const it of items.slice(1)) expect(byId.get(it.attemptId)).toMatchObject({ status: 500, kind: 'server_error' });
    expect(new Set(await xmins(items.slice(1).map((it) => it.attemptId))).size, 'each in its own transaction').toBe(2);
  });
});
