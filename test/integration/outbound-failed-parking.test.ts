// P23 on PostgreSQL and the Temporal dev server: in batched mode, a chunk of first attempts that fails and opens its
// endpoint's circuit leaves RETRYING rows parked with no workflow (not one started workflow per failure that wakes
// only to park); the hand-off sweep leaves them to the probe; the probe's own failed delivery is parked again the
// same way; once the endpoint answers, the probe's release starts each one's workflow, which sends its second attempt
// (each event's 2xx POST exactly once); a disabled endpoint's such rows end FAILED with the reason; and an operator's
// retry of one starts its workflow, which sends the next attempt at once (O12); a forged parkReleased signalWithStart
// sends nothing the probe did not release and writes no audit row (R20).
import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditEvents, deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { DELIVERY_WORKFLOW, parkReleasedSignal } from '../../src/shared/outbound.js';
import { terminateWorkflows } from '../helpers/temporal.js';
import { requestDeliveryRetry } from '../../src/outbound/operator-retry.js';
import { createFirstAttemptStore } from '../../src/outbound/first-attempt-store.js';
import { endpointProbeWorkflowId } from '../../src/shared/endpoint-probe.js';
import { deliveryWorkflowId } from '../../src/shared/ids.js';
import { insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { fanOutBatch } from '../helpers/batches.js';
import { useWorld } from '../helpers/world.js';

const profile = testProfile({
  outbound: {
    delivery_mode: 'batched',
    retry_schedule: ['1s', '1s', '1s', '1s', '1s', '1s', '1s', '1s', '1s', '1s'],
    request_timeout: '2s',
    batched: { handoff_grace: '3s', sweep_interval: '1s' },
    circuit: { open_after_failures: 3, open_after: '1s', open_after_burst: 3, probe_every: '1s', release_tick: '200ms' },
    recovery: { ramp: true, ramp_after: '1s', ramp_start_per_second: 10, ramp_interval: '1s', ramp_max_per_second: 40 },
  },
});
const world = useWorld({ label: 'failed-parking', workers: { profile } });
let down = true;
const answered: { path: string; id: string; status: number }[] = [];
const receiver = await startReceiver((request) => {
  const status = down ? 503 : 200;
  answered.push({ path: request.path, id: (JSON.parse(request.body.toString()) as { id: string }).id, status });
  return { status };
});

const fanOut = (merchantAccount: string, count: number) =>
  fanOutBatch(
    { db: world.db, temporal: world.temporal.client, taskQueue: world.taskQueues.delivery, profile },
    `apipay.test.failed-parking.${merchantAccount}`,
    merchantAccount,
    count,
  );

const rowsOf = (endpointId: string) =>
  world.db
    .select({
      id: deliveries.id,
      eventPublicId: deliveries.eventPublicId,
      status: deliveries.status,
      attemptCount: deliveries.attemptCount,
      parkedSince: deliveries.parkedSince,
      handoffSince: deliveries.handoffSince,
      releasedAttempt: deliveries.releasedAttempt,
      failureReason: deliveries.failureReason,
    })
    .from(deliveries)
    .where(eq(deliveries.endpointId, endpointId));
const exists = (workflowId: string) =>
  world.temporal.client.workflow
    .getHandle(workflowId)
    .describe()
    .then(() => true)
    .catch(() => false);

async function freshDownEndpoint(label: string) {
  const merchantAccount = uniqueMerchant(label);
  const endpoint = await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/${label}/${merchantAccount}` });
  return { merchantAccount, endpointId: endpoint.id };
}

describe('P23 failed first attempts into an open circuit', () => {
  it('P23 a chunk that fails and opens the circuit leaves parked RETRYING rows with no workflow; the release starts each and delivers it once', async () => {
    down = true;
    const { merchantAccount, endpointId } = await freshDownEndpoint('p23');
    const ids = await fanOut(merchantAccount, 8);
    const rows = await rowsOf(endpointId);
    expect(rows).toHaveLength(8);
    // One chunk, one transaction of failures (P21): the streak of 8 opens the circuit, so every one of them parks.
    expect(rows.every((r) => r.status === 'RETRYING' && r.attemptCount >= 1)).toBe(true);
    // Past the hand-off grace, the sweep's query does not hand them off: they are the probe's. (Read only: a sweep pass
    // would start every file's hand-offs; outbound-batched.test.ts runs one, serially.)
    await new Promise((r) => setTimeout(r, 3500));
    const swept = await createFirstAttemptStore(world.db).unhanded(new Date(Date.now() - 3000), 10_000);
    const later = await rowsOf(endpointId);
    expect(swept.filter((u) => later.some((r) => r.id === u.deliveryId))).toEqual([]);
    // With no fresh delivery parked, the probe sends the oldest parked retry (its workflow starts then, P15's path);
    // every row still at its first attempt is parked with the marker and has no workflow.
    const untouched = later.filter((r) => r.attemptCount === 1);
    expect(untouched.length).toBeGreaterThanOrEqual(5);
    expect(untouched.every((r) => r.parkedSince !== null && r.handoffSince !== null)).toBe(true);
    expect((await Promise.all(untouched.map((r) => exists(deliveryWorkflowId(r.id))))).some(Boolean)).toBe(false);
    expect(await exists(endpointProbeWorkflowId(endpointId))).toBe(true);
    const posts = answered.filter((r) => r.path.includes(merchantAccount)).length;
    expect(posts).toBeGreaterThanOrEqual(8); // the chunk's 8 first attempts, then the probes' (1 s, 2 s… apart)
    expect(posts).toBeLessThanOrEqual(8 + 5);

    down = false;
    await waitFor(async () => (await rowsOf(endpointId)).every((r) => r.status === 'DELIVERED'), 60_000, 'all delivered');
    const delivered = answered.filter((r) => r.path.includes(merchantAccount) && r.status === 200).map((r) => r.id);
    expect(delivered.sort()).toEqual([...ids].sort()); // each event's 2xx POST exactly once
    const done = await rowsOf(endpointId);
    expect(done.every((r) => r.attemptCount >= 2 && r.parkedSince === null && r.handoffSince === null)).toBe(true);
    // Each was sent again by the workflow the release started.
    expect((await Promise.all(done.map((r) => exists(deliveryWorkflowId(r.id))))).every(Boolean)).toBe(true);
  });

  it('P23 a probe’s failed fresh delivery is parked again, with no workflow', async () => {
    down = true;
    const { merchantAccount, endpointId } = await freshDownEndpoint('p23-probe');
    await fanOut(merchantAccount, 4); // opens the circuit: these four park after their first attempt
    const more = await fanOut(merchantAccount, 3); // fan-out parks these three: never attempted
    await waitFor(
      async () => answered.filter((r) => more.includes(r.id)).length >= 2,
      15_000,
      'the probe sent fresh deliveries before the retries',
    );
    const rows = await rowsOf(endpointId);
    const probedFresh = rows.filter((r) => more.includes(r.eventPublicId) && r.status === 'RETRYING' && r.attemptCount === 1);
    expect(probedFresh.length).toBeGreaterThanOrEqual(2);
    // No retry was taken for a probe while a fresh one waited: every POST after the first four was a fresh one.
    const afterFirst = answered.filter((r) => r.path.includes(merchantAccount)).slice(4);
    expect(afterFirst.every((r) => more.includes(r.id))).toBe(true);
    await waitFor(
      async () => (await rowsOf(endpointId)).filter((r) => r.parkedSince !== null).length === 7,
      10_000,
      'the probed ones parked again',
    );
    expect((await Promise.all(rows.map((r) => exists(deliveryWorkflowId(r.id))))).some(Boolean)).toBe(false);
    await world.db.update(webhookEndpoints).set({ status: 'disabled' }).where(eq(webhookEndpoints.id, endpointId));
    // A disabled endpoint's parked rows, these included, end FAILED with the reason; none gets a workflow.
    await waitFor(async () => (await rowsOf(endpointId)).every((r) => r.status === 'FAILED'), 20_000, 'all failed');
    const failed = await rowsOf(endpointId);
    expect(failed.every((r) => /disabled/.test(r.failureReason ?? '') && r.parkedSince === null && r.handoffSince === null)).toBe(
      true,
    );
    expect((await Promise.all(failed.map((r) => exists(deliveryWorkflowId(r.id))))).some(Boolean)).toBe(false);
  });

  it('P23/O12 an operator’s retry of such a row starts its workflow, which sends the next attempt at once', async () => {
    down = true;
    const { merchantAccount, endpointId } = await freshDownEndpoint('p23-retry');
    await fanOut(merchantAccount, 4);
    await world.temporal.client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).terminate('test: no release');
    const [row] = (await rowsOf(endpointId)).filter((r) => r.parkedSince !== null && r.attemptCount === 1);
    expect(row).toBeDefined();
    down = false;
    await requestDeliveryRetry({
      client: world.temporal.client,
      taskQueue: world.taskQueues.delivery,
      deliveryId: row!.id,
      retryScheduleMs: profile.outbound.retry_schedule,
      request: { operator: 'test-operator', reason: 'P23 test' },
    });
    const done = await waitFor(
      async () => (await rowsOf(endpointId)).find((r) => r.id === row!.id && r.status === 'DELIVERED'),
      20_000,
      'the retried delivery delivered',
    );
    expect(done).toMatchObject({ attemptCount: 2, parkedSince: null, handoffSince: null });
    // The others stay parked for the probe, with no workflow.
    const rest = (await rowsOf(endpointId)).filter((r) => r.id !== row!.id);
    expect(rest.every((r) => r.parkedSince !== null)).toBe(true);
    expect((await Promise.all(rest.map((r) => exists(deliveryWorkflowId(r.id))))).some(Boolean)).toBe(false);
    await world.db
      .update(deliveries)
      .set({ status: 'FAILED', parkedSince: null, handoffSince: null })
      .where(eq(deliveries.endpointId, endpointId));
  });

  it('P23/R20 a parkReleased signalWithStart sent straight to Temporal, with a forged input, sends nothing the probe did not release and writes no audit row', async () => {
    down = true;
    const { merchantAccount, endpointId } = await freshDownEndpoint('p23-forged');
    await fanOut(merchantAccount, 4);
    await world.temporal.client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).terminate('test: no release');
    // One the probe never took (its first pass may have released the oldest before it was terminated): no workflow,
    // no release recorded.
    const [row] = (await rowsOf(endpointId)).filter(
      (r) => r.parkedSince !== null && r.handoffSince !== null && r.attemptCount === 1 && r.releasedAttempt === null,
    );
    expect(row).toBeDefined();
    // Anyone with Temporal access can start the workflow with the probe's signal and an input of their own.
    await world.temporal.client.workflow.signalWithStart(DELIVERY_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: deliveryWorkflowId(row!.id),
      args: [
        {
          deliveryId: row!.id,
          // The profile's schedule: a forged shorter one moves the cycle's last attempt (never parked) earlier, which
          // is R20's open item on retryScheduleMs (docs/outbound.md), not P23's.
          retryScheduleMs: profile.outbound.retry_schedule,
          priorAttempts: 1,
          resume: { status: 'RETRYING', nextAttemptAt: 0 },
        },
      ],
      signal: parkReleasedSignal,
      signalArgs: [],
    });
    await waitFor(
      async () => (await rowsOf(endpointId)).find((r) => r.id === row!.id && r.handoffSince === null),
      10_000,
      'its workflow parked it',
    );
    await new Promise((r) => setTimeout(r, 1500));
    // Its workflow parks it (P15) and makes sure of the probe, which may release it in turn: an attempt after the
    // first goes out only with a release the probe recorded (R20), never on the forged start alone.
    const after = (await rowsOf(endpointId)).find((r) => r.id === row!.id)!;
    expect(after.attemptCount, 'no attempt without a recorded release').toBeLessThanOrEqual(
      Math.max(1, after.releasedAttempt ?? 1),
    );
    const posts = answered.filter((r) => r.id === row!.eventPublicId).length;
    expect(posts, 'POSTs = attempts').toBe(after.attemptCount);
    const audit = await world.db
      .select({ id: auditEvents.id })
      .from(auditEvents)
      .where(sql`${auditEvents.targetId} = ${row!.id} or coalesce(${auditEvents.after}::text, '') like ${`%${row!.id}%`}`);
    expect(audit).toEqual([]);
    await terminateWorkflows(world.temporal.client, [deliveryWorkflowId(row!.id)]);
    await world.db
      .update(deliveries)
      .set({ status: 'FAILED', parkedSince: null, handoffSince: null })
      .where(eq(deliveries.endpointId, endpointId));
  });
});
