// P13 on PostgreSQL and the Temporal dev server: deliveries to an endpoint whose circuit is open are parked at fan-out
// (no workflow, no POST), its probe workflow tries the oldest while it is down and releases every parked delivery once
// it answers 2xx (each POSTed with 2xx exactly once, nothing left parked, the probe done); a disabled endpoint's parked
// deliveries end FAILED; a burst of failures opens a circuit however young the streak (P16); a probe runs on a task
// queue of its own (P18), its failed delivery parked again (P23); a batch does not wait for its probe's start, nor fails
// when that start fails (P24); and a probe started under a workflow id its endpoint does not derive releases nothing
// (R20).
import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { health } from '../../src/api/console/endpoint-health.js';
import { endpointStats } from '../../src/outbound/endpoint-stats.js';
import { createParkingStore } from '../../src/outbound/parking-store.js';
import { ENDPOINT_PROBE_WORKFLOW, endpointProbeWorkflowId, type EndpointProbeInput } from '../../src/shared/endpoint-probe.js';
import { deliveryWorkflowId } from '../../src/shared/ids.js';
import { WORKFLOW_BUNDLE_PATH } from '../helpers/env.js';
import { insertEndpoint, startReceiver, uniqueMerchant, waitFor } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { terminateWorkflows, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';
import { createWorkers, runWorkers } from '../../src/temporal-workers/build.js';
import { probeQueue } from '../../src/shared/task-queues.js';
import { fanOutBatch, handleBatch, testBatchHandler } from '../helpers/batches.js';
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
const world = useWorld({ label: 'parking', workers: { profile } });
let down = true;
const answered: { path: string; id: string; status: number }[] = [];
const receiver = await startReceiver((request) => {
  const status = down ? 503 : 200;
  answered.push({ path: request.path, id: (JSON.parse(request.body.toString()) as { id: string }).id, status });
  return { status };
});

async function downEndpoint(label: string) {
  const merchantAccount = uniqueMerchant(label);
  const endpoint = await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/${label}/${merchantAccount}` });
  // An outage under way: the attempt store's streak columns as five failures over the last ten seconds leave them.
  await world.db
    .update(webhookEndpoints)
    .set({ consecutiveFailures: 5, failingSince: sql`clock_timestamp() - interval '10 seconds'` })
    .where(eq(webhookEndpoints.id, endpoint.id));
  return { merchantAccount, endpointId: endpoint.id };
}

const fanOut = (merchantAccount: string, count: number, taskQueue = world.taskQueues.delivery) =>
  fanOutBatch({ db: world.db, temporal: world.temporal.client, taskQueue, profile }, `apipay.test.parking.${merchantAccount}`, merchantAccount, count);

const rowsOf = (endpointId: string) =>
  world.db
    .select({
      id: deliveries.id,
      status: deliveries.status,
      parkedSince: deliveries.parkedSince,
      failureReason: deliveries.failureReason,
    })
    .from(deliveries)
    .where(eq(deliveries.endpointId, endpointId));
const running = async (workflowId: string) =>
  world.temporal.client.workflow
    .getHandle(workflowId)
    .describe()
    .then((d) => d.status.name === 'RUNNING')
    .catch(() => false);

describe('P13 parked deliveries', () => {
  it('P13 a down endpoint’s new deliveries park with no workflow; its probe releases every one, each POSTed with 2xx once, after it comes back', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('park');
    const ids = await fanOut(merchantAccount, 30);
    const parked = await rowsOf(endpointId);
    expect(parked).toHaveLength(30);
    // At fan-out every one is parked, PENDING, with no workflow of its own (the probe may have taken the oldest since).
    expect(parked.filter((r) => r.parkedSince !== null).length).toBeGreaterThanOrEqual(29);
    const started = await Promise.all(parked.filter((r) => r.parkedSince !== null).map((r) => running(deliveryWorkflowId(r.id))));
    expect(started.every((s) => !s)).toBe(true);
    expect(await running(endpointProbeWorkflowId(endpointId))).toBe(true);
    // The console's and portal's health cell counts them (src/api/console/endpoint-health.ts).
    const stats = (await endpointStats(world.db, [endpointId])).get(endpointId)!;
    expect(stats.parked).toBeGreaterThanOrEqual(29);
    const endpointRow = (await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId)))[0]!;
    expect(String(health(endpointRow as never, stats, Date.now()).streak)).toMatch(/(29|30) deliveries parked/);

    await new Promise((r) => setTimeout(r, 3500));
    // Down for 3.5 s: only the probes' deliveries were POSTed (one per probe_every, each then retrying in its own
    // workflow; other files' hand-off sweeps may start a probe with their own profile too), not the 30 parked ones.
    const probed = new Set(answered.filter((r) => r.path.includes(merchantAccount)).map((r) => r.id));
    expect(probed.size).toBeGreaterThanOrEqual(1);
    expect(probed.size).toBeLessThanOrEqual(10);
    down = false;
    await waitFor(
      async () => (await rowsOf(endpointId)).every((r) => r.status === 'DELIVERED'),
      60_000,
      'every parked delivery delivered after the endpoint answered 2xx',
    );
    const delivered = answered.filter((r) => r.path.includes(merchantAccount) && r.status === 200).map((r) => r.id);
    expect(delivered.sort()).toEqual([...ids].sort()); // each event's 2xx POST exactly once
    expect((await rowsOf(endpointId)).filter((r) => r.parkedSince !== null)).toEqual([]);
    await waitFor(
      async () => !(await running(endpointProbeWorkflowId(endpointId))),
      20_000,
      'the probe done once nothing is parked',
    );
    // P22: each pass of the probe is one activity and a timer (before P22: parkedState, expireParked, releaseParked).
    const history = await world.temporal.client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).fetchHistory();
    const activities = new Set((history.events ?? []).map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean));
    expect([...activities]).toEqual(['probePass']);
  });

  it('P13 a new delivery queues behind the endpoint’s parked ones even once its circuit has closed', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('behind');
    await fanOut(merchantAccount, 3);
    await world.temporal.client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).terminate('test: hold the backlog');
    // The streak is over and no ramp runs: only the waiting backlog says the next delivery must queue behind it.
    await world.db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: 0, failingSince: null, recoveringSince: null })
      .where(eq(webhookEndpoints.id, endpointId));
    expect((await rowsOf(endpointId)).filter((r) => r.parkedSince !== null).length).toBeGreaterThanOrEqual(2);
    down = false;
    const [late] = await fanOut(merchantAccount, 1);
    const lateRow = await world.db
      .select({ parkedSince: deliveries.parkedSince })
      .from(deliveries)
      .where(and(eq(deliveries.endpointId, endpointId), eq(deliveries.eventPublicId, late!)));
    expect(lateRow[0]?.parkedSince).not.toBeNull();
    // Its probe releases the backlog and the late one behind it.
    await waitFor(async () => (await rowsOf(endpointId)).every((r) => r.status === 'DELIVERED'), 30_000, 'all delivered');
  });

  it('P16 a burst of failures in a row opens the circuit of an endpoint whose streak began a moment ago', async () => {
    down = true;
    const merchantAccount = uniqueMerchant('burst');
    const endpoint = await insertEndpoint(world.db, { merchantAccount, url: `${receiver.url}/burst/${merchantAccount}` });
    // 25 failures in a row (open_after_burst is 20) in a streak younger than open_after (1 s).
    await world.db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: 25, failingSince: sql`clock_timestamp()` })
      .where(eq(webhookEndpoints.id, endpoint.id));
    const ids = await fanOut(merchantAccount, 10);
    expect((await rowsOf(endpoint.id)).filter((r) => r.parkedSince !== null).length).toBeGreaterThanOrEqual(9);
    expect(await running(endpointProbeWorkflowId(endpoint.id))).toBe(true);
    down = false;
    await waitFor(
      async () => (await rowsOf(endpoint.id)).every((r) => r.status === 'DELIVERED'),
      30_000,
      'released and delivered',
    );
    const delivered = answered.filter((r) => r.path.includes(merchantAccount) && r.status === 200).map((r) => r.id);
    expect(delivered.sort()).toEqual([...ids].sort());
  });

  it('P13 a disabled endpoint’s parked deliveries end FAILED with the reason, and its probe ends', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('disabled');
    await fanOut(merchantAccount, 4);
    await world.db.update(webhookEndpoints).set({ status: 'disabled' }).where(eq(webhookEndpoints.id, endpointId));
    await waitFor(async () => (await rowsOf(endpointId)).every((r) => r.parkedSince === null), 20_000, 'parked rows failed');
    const rows = await rowsOf(endpointId);
    expect(rows.filter((r) => r.status === 'FAILED' && /disabled/.test(r.failureReason ?? '')).length).toBeGreaterThanOrEqual(3);
    await waitFor(async () => !(await running(endpointProbeWorkflowId(endpointId))), 20_000, 'the probe ended');
  });

  it('P18 a probe runs on its own task queue: it probes while no delivery-queue worker has a slot for it', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('own-queue');
    // Workers of their own, whose delivery-queue worker is then stopped: the extreme of a retry fire's backlog.
    const queues = uniqueTaskQueues('parking-p18');
    const workers = await createWorkers({
      connection: world.temporal.native,
      taskQueues: queues,
      activities: testActivities(world.db, { profile }),
      workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH },
    });
    const running = runWorkers(workers);
    world.onClose(async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
    });
    const deliveryWorker = workers.find((w) => w.options.taskQueue === queues.delivery)!;
    deliveryWorker.shutdown();
    await waitFor(async () => deliveryWorker.getState() === 'STOPPED', 20_000, 'the delivery worker stopped');
    await fanOut(merchantAccount, 3, queues.delivery);
    const probe = await world.temporal.client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).describe();
    expect(probe.taskQueue).toBe(probeQueue(queues.delivery));
    // The probe's first step POSTs the oldest parked delivery: it ran with the delivery queue unserved.
    await waitFor(
      async () => answered.some((r) => r.path.includes(merchantAccount)),
      15_000,
      'the probe POSTed the oldest parked delivery',
    );
    // P23: its 503 parks it again (RETRYING, no workflow). Once the endpoint answers, the release starts its workflow
    // on the delivery queue (not the probe's), where no worker runs: it waits there, started.
    const probed = await waitFor(
      async () => (await rowsOf(endpointId)).find((r) => r.status === 'RETRYING' && r.parkedSince !== null),
      10_000,
      'the probed delivery parked again after its 503',
    );
    const started = await world.temporal.client.workflow.getHandle(deliveryWorkflowId(probed.id)).describe().catch(() => null);
    expect(started).toBeNull();
    down = false;
    const described = await waitFor(
      () =>
        world.temporal.client.workflow
          .getHandle(deliveryWorkflowId(probed.id))
          .describe()
          .catch(() => undefined),
      15_000,
      'the probed delivery’s workflow, started by the release',
    );
    expect(described.taskQueue).toBe(queues.delivery);
    await terminateWorkflows(world.temporal.client, [deliveryWorkflowId(probed.id)]);
    await world.temporal.client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).terminate('test: done');
    await world.db.update(deliveries).set({ status: 'FAILED', parkedSince: null }).where(eq(deliveries.endpointId, endpointId));
  });

  it('P24 a batch does not wait for its probe’s start: the handler returns while the start is held; drain() waits for it', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('p24');
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const client = world.temporal.client;
    // The real client, its workflow starts held at the gate (the only start here is the probe's: the circuit is open).
    const workflow = Object.create(client.workflow, {
      start: { value: async (...args: Parameters<typeof client.workflow.start>) => (await gate, client.workflow.start(...args)) },
    }) as typeof client.workflow;
    const held = Object.create(client, { workflow: { value: workflow } }) as typeof client;
    const handler = testBatchHandler({ db: world.db, temporal: held, taskQueue: world.taskQueues.delivery, profile });
    const returned = await Promise.race([
      handleBatch(handler, 'apipay.test.p24', merchantAccount, 1).then(() => 'returned'),
      new Promise((resolve) => setTimeout(() => resolve('held'), 5000)),
    ]);
    expect(returned).toBe('returned');
    expect((await rowsOf(endpointId)).filter((r) => r.parkedSince !== null)).toHaveLength(1);
    expect(await running(endpointProbeWorkflowId(endpointId))).toBe(false);
    open();
    await handler.drain();
    expect(await running(endpointProbeWorkflowId(endpointId))).toBe(true);
    await client.workflow.getHandle(endpointProbeWorkflowId(endpointId)).terminate('test: done');
    await world.db.update(deliveries).set({ status: 'FAILED', parkedSince: null }).where(eq(deliveries.endpointId, endpointId));
  });

  it('P24 a probe start that fails (Temporal unreachable) does not fail the committed batch; its rows wait for the sweep', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('p24-down');
    const client = world.temporal.client;
    const workflow = Object.create(client.workflow, {
      start: { value: async () => Promise.reject(new Error('14 UNAVAILABLE: test: Temporal unreachable')) },
    }) as typeof client.workflow;
    const unreachable = Object.create(client, { workflow: { value: workflow } }) as typeof client;
    const handler = testBatchHandler({ db: world.db, temporal: unreachable, taskQueue: world.taskQueues.delivery, profile });
    await handleBatch(handler, 'apipay.test.p24', merchantAccount, 1); // resolves: the offsets may move on
    await handler.drain();
    expect((await rowsOf(endpointId)).filter((r) => r.parkedSince !== null)).toHaveLength(1);
    expect(await running(endpointProbeWorkflowId(endpointId))).toBe(false);
    // The hand-off sweep's query names the endpoint once its row is older than the grace: the sweep starts its probe.
    const stale = await createParkingStore(world.db).staleEndpoints(new Date(Date.now() + 1000), 10_000);
    expect(stale).toContain(endpointId);
    await world.db.update(deliveries).set({ status: 'FAILED', parkedSince: null }).where(eq(deliveries.endpointId, endpointId));
  });

  it('R20/P13 a probe started under a workflow id its endpoint does not derive releases nothing', async () => {
    down = true;
    const { merchantAccount, endpointId } = await downEndpoint('forged');
    await fanOut(merchantAccount, 4);
    await world.temporal.client.workflow
      .getHandle(endpointProbeWorkflowId(endpointId))
      .terminate('test: only the forged probe runs');
    const before = (await rowsOf(endpointId)).filter((r) => r.parkedSince !== null).length;
    const input: EndpointProbeInput = { endpointId, probeEveryMs: 1000, releaseTickMs: 200 };
    down = false; // a release would deliver them now
    const handle = await world.temporal.client.workflow.start(ENDPOINT_PROBE_WORKFLOW, {
      taskQueue: world.taskQueues.delivery,
      workflowId: `forged-${endpointId}`,
      args: [input],
    });
    expect(await handle.result()).toEqual({ released: 0, failed: 0 });
    expect((await rowsOf(endpointId)).filter((r) => r.parkedSince !== null)).toHaveLength(before);
    expect(before).toBeGreaterThanOrEqual(3);
    // Not left parked for other files' hand-off sweeps to find.
    await world.db.update(deliveries).set({ status: 'FAILED', parkedSince: null }).where(eq(deliveries.endpointId, endpointId));
  });
});
