// P3 on the real dev server: the backlog gate reads the task queue's backlog from DescribeTaskQueue stats. With
// workflows waiting on a queue no worker polls, a gate whose max is below that backlog holds its start; once a worker
// drains the queue the figure drops and the start goes through.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { backlogGate } from '../../src/inbound/backlog-gate.js';
import { startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';
import { useWorld, type World } from '../helpers/world.js';

let database: Database;
let temporal: World['temporal'];
const stops: (() => Promise<unknown>)[] = [];

const world = useWorld({ label: 'backlog-gate' });
beforeAll(async () => {
  database = world.database;
  temporal = world.temporal;
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => {});
});

describe('reconciliation backlog gate on the dev server (P3)', () => {
  it('holds a start while the queue holds more waiting workflow tasks than max, and lets it go once a worker drained them', async () => {
    const queues = uniqueTaskQueues('gate');
    const backlog = async () => {
      const described = await temporal.client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: queues.smoke },
        taskQueueType: 1,
        reportStats: true,
      });
      return Number(described.stats?.approximateBacklogCount ?? -1);
    };
    for (let i = 0; i < 8; i++) {
      await temporal.client.workflow.start('smokeWorkflow', {
        taskQueue: queues.smoke,
        workflowId: `gate-${randomUUID()}`,
        args: [{ runId: randomUUID(), note: 'P3 backlog gate' }],
      });
    }
    await waitFor(async () => (await backlog()) >= 8, 30_000, 'the server reports the 8 waiting workflow tasks');

    const gate = backlogGate({ temporal: temporal.client, taskQueue: queues.smoke, max: 5, pollMs: 200 });
    let through = false;
    const start = gate.acquire().then(() => (through = true));
    await new Promise((r) => setTimeout(r, 1500));
    expect(through).toBe(false);

    const workers = await startWorkers({
      connection: temporal.native,
      taskQueues: queues,
      activities: testActivities(database.db),
    });
    stops.push(() => workers.stop());
    await waitFor(() => through, 45_000, 'the start let through once the backlog drained');
    await start;
    expect(await backlog()).toBeLessThan(5);
  });
});
