// The foundation's smoke slice through every real part: Kafka → dispatcher → Temporal dev server → activity →
// PostgreSQL; and a 12-hour durable timer on the time-skipping test server.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { smokeRuns } from '../../src/db/schema/index.js';
import { createSmokeHandler } from '../../src/dispatcher/smoke-handler.js';
import { runDispatcher } from '../../src/dispatcher/run.js';
import { createBatchConsumer, createKafkaAdmin, createProducer } from '../../src/kafka/kafkajs.js';
import { KAFKA_BROKERS, TEST_DATABASE_URL } from '../helpers/env.js';
import { connectDevServer, createTimeSkippingEnv, startWorkers, testActivities, uniqueTaskQueues } from '../helpers/temporal.js';
import { waitFor } from '../helpers/wait.js';

let database: Database;
beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
});
afterAll(() => database.close());

describe('smoke slice on the real servers', () => {
  it('a Kafka message becomes a workflow on the dev server whose activity writes a PostgreSQL row', async () => {
    const topic = `apipay.smoke.${randomUUID().slice(0, 8)}`;
    const admin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'smoke-test' });
    await admin.createTopic(topic, 2);
    const temporal = await connectDevServer();
    const taskQueues = uniqueTaskQueues('smoke');
    const workers = await startWorkers({ connection: temporal.native, taskQueues, activities: testActivities(database.db) });
    const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: 'smoke-dispatcher', topic, groupId: `smoke-${topic}` });
    const dispatching = runDispatcher(consumer, createSmokeHandler({ temporal: temporal.client, taskQueue: taskQueues.smoke }));
    const producer = await createProducer({ brokers: KAFKA_BROKERS, clientId: 'smoke-producer' });
    try {
      await dispatching;
      const runId = `smk_${randomUUID()}`;
      await producer.send(topic, [{ key: runId, value: JSON.stringify({ runId, note: 'through kafka' }) }]);

      const row = await waitFor(async () => (await database.db.select().from(smokeRuns).where(eq(smokeRuns.id, runId)))[0]);
      expect(row.note).toBe('through kafka');
      expect(row.workflowId).toBe(`smoke:${runId}`);

      const handle = temporal.client.workflow.getHandle(`smoke:${runId}`);
      const result = await handle.result();
      expect(result.runId).toBe(runId);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      console.log(`smoke slice: kafka topic ${topic} → workflow smoke:${runId} COMPLETED on ${(await handle.describe()).taskQueue} → row in smoke_runs`);
    } finally {
      await producer.close();
      await consumer.stop();
      await workers.stop();
      await admin.close();
      await temporal.close();
    }
  });

  it('a workflow that sleeps 12 hours of workflow time finishes in seconds with time skipping', async () => {
    const env = await createTimeSkippingEnv();
    const taskQueues = uniqueTaskQueues('skip');
    const workers = await startWorkers({ connection: env.nativeConnection, taskQueues, activities: testActivities(database.db) });
    try {
      const runId = `smk_${randomUUID()}`;
      const started = Date.now();
      const result = await env.client.workflow.execute('smokeWorkflow', {
        taskQueue: taskQueues.smoke,
        workflowId: `smoke:${runId}`,
        args: [{ runId, note: 'after 12h', sleep: '12h' }],
      });
      const elapsed = Date.now() - started;
      expect(result.runId).toBe(runId);
      const [row] = await database.db.select().from(smokeRuns).where(eq(smokeRuns.id, runId));
      expect(row?.note).toBe('after 12h');
      expect(elapsed).toBeLessThan(12 * 3600 * 1000);
      console.log(`time skipping: 12h of workflow time took ${elapsed} ms of wall time`);
    } finally {
      await workers.stop();
      await env.teardown();
    }
  });
});
