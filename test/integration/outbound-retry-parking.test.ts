// P15 on PostgreSQL and the Temporal dev server: deliveries already retrying when their endpoint's circuit opens are
// parked by their workflows at their next retry (no POST into the outage, the workflow waits), the probe sends only
// the oldest while the endpoint is down and releases them all after it answers 2xx (each 2xx POST once, nothing left
// parked); an operator's retryNow sends a parked retry at once; a parked retry whose remaining schedule passes ends
// FAILED with the reason; one whose workflow is gone is started again from its row by the release; and a
// `parkReleased` signal sent straight to Temporal (R20: not the probe's) releases nothing.
import { eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditEvents, deliveries, deliveryAttempts, webhookEndpoints } from '../../src/db/schema/index.js';
import { deliveryJson } from '../../src/api/admin/outbound-schemas.js';
import { startDeliveryWorkflows } from '../../src/outbound/delivery-start.js';
import { endpointProbeWorkflowId } from '../../src/shared/endpoint-probe.js';
import { deliveryWorkflowId } from '../../src/shared/ids.js';
import { parkReleasedSignal, retryNowSignal } from '../../src/shared/outbound.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { testActivities } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const outbound = {
  // The first retry after 1 s finds the circuit open; parked, a retry may wait the 30 s its remaining schedule would
  // take; one the probe released (or an operator sent) and that failed again waits 2 s and parks again.
  retry_schedule: ['1s', ...Array<string>(15).fill('2s')],
  request_timeout: '2s',
  circuit: { open_after_failures: 3, open_after: '500ms', open_after_burst: 3, probe_every: '1s', release_tick: '200ms' },
  recovery: { jitter: 0, ramp: true, ramp_after: '1s', ramp_start_per_second: 10, ramp_interval: '1s', ramp_max_per_second: 40 },
};
const profile = testProfile({ outbound });
const world = useWorld({ label: 'retry-parking', workers: { profile } });
let down = true;
const receiver = await startReceiver(() => ({ status: down ? 503 : 200 }));

const rowsOf = (ids: string[]) =>
  world.db
    .select({
      id: deliveries.id,
      status: deliveries.status,
      parkedSince: deliveries.parkedSince,
      reason: deliveries.failureReason,
    })
    .from(deliveries)
    .where(inArray(deliveries.id, ids));
const postsTo = (path: string) => receiver.received.filter((r) => r.path === path);
const running = (workflowId: string) =>
  world.temporal.client.workflow
    .getHandle(workflowId)
    .describe()
    .then((d) => d.status.name === 'RUNNING')
    .catch(() => false);

/** `count` deliveries to a new endpoint that answers 503 while `down`, each with its workflow (attempt 1 at once). */
async function retryingBacklog(label: string, count: number, schedule = profile) {
  const merchantAccount = uniqueMerchant(label);
  const path = `/${label}/${merchantAccount}`;
  const endpointId = (await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}${path}` })).id;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await insertDelivery(world.db, { endpointId, merchantAccount })).deliveryId);
  await startDeliveryWorkflows(
    { temporal: world.temporal.client, taskQueue: world.taskQueues.delivery, profile: schedule },
    ids.map((deliveryId) => ({ deliveryId, endpointId, merchantAccount, eventType: 'payment.succeeded' })),
  );
  return { endpointId, ids, path };
}

/** Most of them parked (the probe releases the oldest parked one every probe_every, which then waits its next retry). */
const mostParked = (ids: string[]) => async () =>
  (await rowsOf(ids)).filter((r) => r.status === 'RETRYING' && r.parkedSince !== null).length >= ids.length - 3;

describe('P15 retries parked by the circuit', () => {
  it('P15 retries due while the circuit is open are parked, not POSTed; the probe releases them after the return, each 2xx once', async () => {
    down = true;
    const { endpointId, ids, path } = await retryingBacklog('parked-retry', 12);
    await waitFor(mostParked(ids), 60_000, 'the retries parked by their workflows');
    const workflows = await Promise.all(ids.map((id) => running(deliveryWorkflowId(id))));
    expect(workflows.every(Boolean), 'each parked retry’s workflow waits').toBe(true);
    expect(await running(endpointProbeWorkflowId(endpointId))).toBe(true);
    // The admin API shows why nothing is scheduled: parked since, RETRYING, no next attempt.
    const shown = (await world.db.select().from(deliveries).where(inArray(deliveries.id, ids))).map(deliveryJson);
    expect(
      shown.filter((d) => d.parked_since !== null && d.status === 'RETRYING' && d.next_attempt_at === null).length,
    ).toBeGreaterThanOrEqual(ids.length - 3);
    // Down for 4 s more: only the probe's oldest is POSTed (about one per probe_every); without P15 the 12 would have
    // POSTed their second attempt by now.
    const before = postsTo(path).length;
    await new Promise((r) => setTimeout(r, 4000));
    expect(postsTo(path).length - before, 'POSTs into the outage while parked').toBeLessThanOrEqual(8);

    down = false;
    await waitFor(async () => (await rowsOf(ids)).every((r) => r.status === 'DELIVERED'), 60_000, 'every retry delivered');
    const oks = await world.db
      .select({ id: deliveryAttempts.deliveryId })
      .from(deliveryAttempts)
      .where(sql`${deliveryAttempts.deliveryId} in ${ids} and ${deliveryAttempts.succeeded}`);
    expect(oks.map((r) => r.id).sort()).toEqual([...ids].sort()); // one successful attempt each
    expect((await rowsOf(ids)).filter((r) => r.parkedSince !== null)).toEqual([]);
    await waitFor(async () => !(await running(endpointProbeWorkflowId(endpointId))), 30_000, 'the probe done');
  });

  it('P15 an operator’s retryNow sends a parked retry at once; its workflow started again from the row when it is gone', async () => {
    down = true;
    const { ids, path } = await retryingBacklog('parked-operator', 8);
    await waitFor(mostParked(ids), 60_000, 'the retries parked');
    // The newest two: the probe sends the oldest parked first, so while the endpoint is down it rarely reaches them.
    const [asked, gone] = [ids.at(-1)!, ids.at(-2)!];
    const attempts = async (id: string) =>
      (await world.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, id))).length;
    const before = await attempts(asked);
    await world.temporal.client.workflow.getHandle(deliveryWorkflowId(asked)).signal(retryNowSignal, { operator: 'ops' });
    await waitFor(async () => (await attempts(asked)) >= before + 1, 10_000, 'the operator’s attempt recorded');
    expect(postsTo(path).length).toBeGreaterThanOrEqual(before + 1);
    // One retryNow, one attempt: when it fails, the next waits its 2 s and parks again (it was sent twice at once).
    await new Promise((r) => setTimeout(r, 3000));
    expect(await attempts(asked), 'attempts after one retryNow').toBe(before + 1);

    // A parked retry whose workflow was terminated: the release starts it again from its row and it is delivered.
    await waitFor(async () => (await rowsOf([gone]))[0]!.parkedSince !== null, 10_000, 'parked');
    await world.temporal.client.workflow.getHandle(deliveryWorkflowId(gone)).terminate('test: the workflow is lost');
    down = false;
    await waitFor(async () => (await rowsOf(ids)).every((r) => r.status === 'DELIVERED'), 60_000, 'every retry delivered');
  });

  it('P15/R20 a parkReleased signal sent straight to Temporal releases nothing: no POST, no attempt, no audit row', async () => {
    down = true;
    const { ids } = await retryingBacklog('forged-release', 8);
    await waitFor(mostParked(ids), 60_000, 'the retries parked');
    // The newest: the probe releases the oldest parked first (each released one fails and parks again ahead of it).
    const target = ids.at(-1)!;
    await waitFor(async () => (await rowsOf([target]))[0]!.parkedSince !== null, 10_000, 'parked');
    const attemptsOf = async () =>
      (await world.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, target))).length;
    const before = await attemptsOf();
    // Anyone with Temporal access can send the probe's signal; the attempt is released only by what the probe recorded.
    const handle = world.temporal.client.workflow.getHandle(deliveryWorkflowId(target));
    for (let i = 0; i < 3; i++) {
      await handle.signal(parkReleasedSignal);
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(await attemptsOf(), 'no attempt sent by the forged release').toBe(before);
    const [row] = await rowsOf([target]);
    expect(row!.status).toBe('RETRYING');
    expect(row!.parkedSince, 'still parked').not.toBeNull();
    expect(await running(deliveryWorkflowId(target)), 'its workflow still waits').toBe(true);
    const audit = await world.db
      .select({ id: auditEvents.id })
      .from(auditEvents)
      .where(sql`${auditEvents.targetId} = ${target} or coalesce(${auditEvents.after}::text, '') like ${`%${target}%`}`);
    expect(audit).toEqual([]);
    // The probe's own release still sends it once the endpoint answers.
    down = false;
    await waitFor(async () => (await rowsOf(ids)).every((r) => r.status === 'DELIVERED'), 60_000, 'every retry delivered');
  });

  it('P15 a retry parked for the rest of its schedule ends FAILED with the reason', async () => {
    down = true;
    // A schedule of 1 s then 2 s: parked at the first retry, a retry may wait 2 s for its release.
    const short = testProfile({ outbound: { ...outbound, retry_schedule: ['1s', '2s'] } });
    const { endpointId, ids } = await retryingBacklog('parked-expiry', 8, short);
    await waitFor(
      async () =>
        (await rowsOf(ids)).filter((r) => r.status === 'FAILED' && /parked for the rest/.test(r.reason ?? '')).length >= 4,
      60_000,
      'the parked retries failed at their deadline',
    );
    // The probe's release of the oldest each probe_every may make it fail by its last attempt instead: both are FAILED.
    await waitFor(
      async () => (await rowsOf(ids)).every((r) => r.status === 'FAILED' && r.parkedSince === null),
      30_000,
      'all FAILED',
    );
    await world.db.update(webhookEndpoints).set({ status: 'disabled' }).where(eq(webhookEndpoints.id, endpointId));
  });

  it('P15 a retry the probe released (its row says so) is paced by the release, not again by M5’s slots; one not released waits for its slot', async () => {
    down = false;
    const merchantAccount = uniqueMerchant('released-pace');
    const endpointId = (await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/released/${merchantAccount}` }))
      .id;
    await world.db.update(webhookEndpoints).set({ rateLimitPerSecond: 1 }).where(eq(webhookEndpoints.id, endpointId));
    const activities = testActivities(world.db, { profile });
    // Attempt 2 of a RETRYING delivery; `releasedAttempt` as the probe's take writes it before its signal (R20).
    const attempt = async (releasedAttempt: number | null) => {
      const { deliveryId } = await insertDelivery(world.db, {
        endpointId,
        merchantAccount,
        delivery: { status: 'RETRYING', attemptCount: 1, releasedAttempt },
      });
      return activities.attemptDelivery({
        deliveryId,
        attemptNumber: 2,
        scheduledAt: Date.now(),
        retryInMs: 2000,
        mayPark: true,
      });
    };
    const releasedOnes = await Promise.all([attempt(2), attempt(2), attempt(2)]);
    expect(releasedOnes.map((r) => r.outcome)).toEqual(['delivered', 'delivered', 'delivered']);
    // Not released (none recorded, or an earlier attempt's release): M5's slots pace them, at 1/s.
    const others = await Promise.all([attempt(null), attempt(1), attempt(null)]);
    expect(others.filter((r) => r.outcome === 'deferred' && r.deferral?.kind === 'throttle').length).toBeGreaterThanOrEqual(1);
  });

  it('P15/R3 a retried attempt whose number is already reserved is settled, never parked (soak seed 60607)', async () => {
    // The soak's defect: attempt 2 was reserved and POSTed, its record failed (PostgreSQL killed), and the activity's
    // retry found the circuit open and parked the delivery, leaving attempt 2 in flight for ever and the count wrong.
    const merchantAccount = uniqueMerchant('reserved-park');
    const endpointId = (await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/reserved/${merchantAccount}` }))
      .id;
    await world.db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: 5, failingSince: sql`clock_timestamp() - interval '1 hour'` })
      .where(eq(webhookEndpoints.id, endpointId));
    const { deliveryId } = await insertDelivery(world.db, {
      endpointId,
      merchantAccount,
      delivery: { status: 'RETRYING', attemptCount: 1 },
    });
    const longAgo = new Date(Date.now() - 3_600_000);
    await world.db.insert(deliveryAttempts).values([
      {
        deliveryId,
        attemptNumber: 1,
        startedAt: longAgo,
        latencyMs: 5,
        succeeded: false,
        errorKind: 'server_error',
        responseStatus: 503,
      },
      { deliveryId, attemptNumber: 2, startedAt: longAgo, latencyMs: 0, succeeded: false, errorKind: 'in_flight' },
    ]);
    const result = await testActivities(world.db, { profile }).attemptDelivery({
      deliveryId,
      attemptNumber: 2,
      scheduledAt: Date.now(),
      retryInMs: 2000,
      lane: 'slow', // M2: an endpoint that keeps failing is attempted in its slow lane
      mayPark: true,
    });
    expect(result.outcome).toBe('failed'); // recorded interrupted (its lease is long over), not parked
    const [row] = await rowsOf([deliveryId]);
    expect(row!.parkedSince).toBeNull();
    const attempts = await world.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId));
    expect(attempts.find((a) => a.attemptNumber === 2)!.errorKind).toBe('interrupted');
  });
});
