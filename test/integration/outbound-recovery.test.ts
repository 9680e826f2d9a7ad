// P12 on PostgreSQL and the Temporal dev server (real time: rates are measured). The ramp's SQL gives the rate the
// TypeScript rule does (src/outbound/recovery.ts); M5's slots booked during a ramp follow its doublings; only an
// outage of ramp_after starts a ramp (both write paths: the activity's attempt store and the batched first attempts);
// and a merchant that comes back after an outage gets its backlog of retries no faster than the ramp allows.
import { eq, inArray, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { startDeliveryWorkflows } from '../../src/outbound/delivery-start.js';
import { createAttemptStore } from '../../src/outbound/attempt-store.js';
import { createFirstAttemptStore } from '../../src/outbound/first-attempt-store.js';
import { rampRate, sendRateSql, type RecoverySettings } from '../../src/outbound/recovery.js';
import { reserveSlot } from '../../src/outbound/throttle.js';
import { testLogger } from '../helpers/temporal.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { useWorld } from '../helpers/world.js';

const RAMP = { ramp: true, ramp_after: '1s', ramp_start_per_second: 2, ramp_interval: '1s', ramp_max_per_second: 16 };
const profile = testProfile({
  outbound: { retry_schedule: ['2s', '2s', '2s', '2s', '2s', '2s'], recovery: { ...RAMP, jitter: 0.2 } },
});
const recovery = profile.outbound.recovery;
const world = useWorld({ label: 'recovery', workers: { profile } });

const success = {
  succeeded: true,
  responseStatus: 200,
  errorKind: null,
  errorMessage: null,
  excerpt: 'ok',
  latencyMs: 3,
} as const;

async function endpointWith(values: Partial<typeof webhookEndpoints.$inferInsert>, url = 'http://127.0.0.1:9/none') {
  const endpoint = await insertEndpoint(world.db, { merchantAccount: uniqueMerchant('p12'), url });
  if (Object.keys(values).length) await world.db.update(webhookEndpoints).set(values).where(eq(webhookEndpoints.id, endpoint.id));
  return endpoint.id;
}

const recoveringSince = async (id: string) =>
  (await world.db.select({ at: webhookEndpoints.recoveringSince }).from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0]!
    .at;

describe('P12 recovery ramp', () => {
  it('P12 property: the SQL rate at any point of a ramp is the TypeScript rule’s, throttled or not', async () => {
    const id = await endpointWith({});
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          start: fc.integer({ min: 1, max: 50 }),
          interval: fc.integer({ min: 200, max: 5000 }),
          steps: fc.integer({ min: 0, max: 12 }),
        }),
        fc.option(fc.integer({ min: 1, max: 500 }), { nil: null }),
        async ({ start, interval, steps }, cap) => {
          const r: RecoverySettings = {
            ...recovery,
            ramp_start_per_second: start,
            ramp_interval: interval,
            ramp_max_per_second: 200,
          };
          const elapsed = steps * interval + interval / 2; // mid-interval: the few ms between statements change nothing
          await world.db
            .update(webhookEndpoints)
            .set({ rateLimitPerSecond: cap, recoveringSince: sql`clock_timestamp() - make_interval(secs => ${elapsed / 1000})` })
            .where(eq(webhookEndpoints.id, id));
          const [row] = await world.db
            .select({ rate: sendRateSql(r) })
            .from(webhookEndpoints)
            .where(eq(webhookEndpoints.id, id));
          const expected = rampRate(elapsed, r, cap);
          if (expected === null) expect(row!.rate).toBeNull();
          else expect(Number(row!.rate)).toBeCloseTo(expected, 6);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('P12 slots booked during a ramp follow its doublings: 2, 4, 8 in its first three seconds, then its ceiling', async () => {
    const id = await endpointWith({ recoveringSince: sql`clock_timestamp()` as never });
    const [{ start }] =
      (await world.sql`select (extract(epoch from recovering_since) * 1000)::float8 as start from webhook_endpoints where id = ${id}`) as unknown as [
        { start: number },
      ];
    const slots: number[] = [];
    for (let i = 0; i < 30; i++) slots.push((await reserveSlot(world.db, id, recovery))!.at - start);
    const inSecond = (s: number) => slots.filter((t) => t >= s * 1000 - 5 && t < (s + 1) * 1000 - 5).length;
    expect([0, 1, 2].map(inSecond)).toEqual([2, 4, 8]);
    // from 3 s the ramp (16/s) reached ramp_max_per_second: the slots already booked go on at that ceiling
    expect(inSecond(3)).toBe(16);
  });

  it('P12 only a 2xx after an outage of ramp_after starts a ramp, in both write paths', async () => {
    const store = createAttemptStore({ db: world.db, logger: testLogger, autoDisableAfterMs: 7 * 86_400_000, recovery });
    const first = createFirstAttemptStore(world.db, recovery);
    for (const [failingForMs, ramps] of [
      [200, false],
      [5_000, true],
    ] as const) {
      for (const path of ['activity', 'batched'] as const) {
        const failingSince = sql`clock_timestamp() - make_interval(secs => ${failingForMs / 1000})`;
        const id = await endpointWith({ failingSince: failingSince as never, consecutiveFailures: 9 });
        const { deliveryId } = await insertDelivery(world.db, { endpointId: id, merchantAccount: 'acct_p12' });
        if (path === 'activity') {
          const input = { deliveryId, attemptNumber: 1, scheduledAt: Date.now(), retryInMs: 2000 };
          const reservation = await store.reserve(input, new Date());
          if (reservation.kind !== 'reserved') throw new Error('not reserved');
          await store.record(input, reservation.attemptId, id, success);
        } else {
          const [reserved] = await first.reserve([deliveryId], new Date());
          await first.markDelivered(
            [{ deliveryId, attemptId: reserved!.attemptId, endpointId: id, outcome: success }],
            new Date(),
          );
        }
        const [endpoint] = await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
        expect(endpoint!.failingSince, `${path}: the streak ended`).toBeNull();
        expect(endpoint!.consecutiveFailures).toBe(0);
        expect((await recoveringSince(id)) !== null, `${path} after ${failingForMs} ms failing: ramp`).toBe(ramps);
      }
    }
  });

  it(
    'P12 a merchant back from an outage gets its retrying backlog no faster than the ramp allows',
    { timeout: 240_000 },
    async () => {
      const COUNT = 40;
      let up = false;
      const answered: number[] = []; // the status of each request, by its index
      const receiver = await startReceiver((_, index) => {
        answered[index] = up ? 200 : 503;
        return { status: answered[index] };
      });
      const statuses = async (ids: string[]) =>
        (await world.db.select().from(deliveries).where(inArray(deliveries.id, ids))).map((d) => d.status);
      try {
        const merchantAccount = uniqueMerchant('p12');
        const endpointId = (await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/hook` })).id;
        const ids: string[] = [];
        for (let i = 0; i < COUNT; i++) ids.push((await insertDelivery(world.db, { endpointId, merchantAccount })).deliveryId);
        await startDeliveryWorkflows(
          { temporal: world.temporal.client, taskQueue: world.taskQueues.delivery, profile },
          ids.map((deliveryId) => ({ deliveryId, endpointId, merchantAccount, eventType: 'payment.succeeded' })),
        );
        // Every attempt fails (503) and waits 3 s (+ up to 20 % jitter) for the next (the schedule outlasts a slow
        // machine's starts); the merchant comes back once each delivery has failed and the endpoint for ramp_after.
        await waitFor(async () => (await statuses(ids)).every((s) => s === 'RETRYING'), 90_000, 'every delivery RETRYING');
        const nexts = (await world.db.select().from(deliveries).where(inArray(deliveries.id, ids))).map((d) =>
          d.nextAttemptAt!.getTime(),
        );
        expect(new Set(nexts).size, 'the jitter spreads the retries').toBeGreaterThan(1);
        await waitFor(
          async () => {
            const [row] =
              await world.sql`select failing_since < clock_timestamp() - interval '1.2 seconds' as long from webhook_endpoints where id = ${endpointId}`;
            return row!.long === true;
          },
          10_000,
          'failing for ramp_after',
        );
        up = true;
        await waitFor(async () => (await statuses(ids)).every((s) => s === 'DELIVERED'), 120_000, 'every delivery DELIVERED');
        const oks = receiver.received
          .filter((_, i) => answered[i] === 200)
          .map((r) => r.at)
          .sort((a, b) => a - b);
        expect(oks).toHaveLength(COUNT);
        const recovered = oks[0]!;
        // Allowed from the first 2xx to t: the ramp's rate over [recovered, t] (2/s, 4/s, 8/s, then free at its 16/s
        // ceiling), plus the attempts admitted before the first 2xx was recorded (the ramp starts with that record).
        const allowed = (t: number) => {
          let n = 0;
          for (let s = 0; s < t - recovered; s += 10) n += (rampRate(s, recovery, null) ?? 1000) / 100;
          return n;
        };
        const SLACK = 4;
        for (const [i, t] of oks.entries())
          expect(i + 1, `POSTs ${t - recovered} ms after the first 2xx`).toBeLessThanOrEqual(Math.ceil(allowed(t)) + 1 + SLACK);
        // Without the ramp the 40 retries would all arrive within one retry wait; with it the first 14 take 3 s.
        expect(oks[14]! - recovered, 'the backlog drained over the ramp').toBeGreaterThan(1500);
        expect(await recoveringSince(endpointId)).not.toBeNull();
      } finally {
        await receiver.close();
      }
    },
  );
});
