// O5 on the real broker: our consumer commits a batch's offsets only after the handler resolved, and then really
// commits them (kafkajs with autoCommit off commits nothing unless the offsets are passed explicitly). P2: the commits
// run on a timer, off the fetch path; a graceful stop commits what was handled, the batch in hand included.
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createBatchConsumer, createKafkaAdmin, createProducer } from '../../src/kafka/kafkajs.js';
import type { MessageBatch } from '../../src/kafka/types.js';
import { KAFKA_BROKERS } from '../helpers/env.js';
import { waitFor } from '../helpers/wait.js';

const admin = createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: 'consumer-test' });
afterAll(() => admin.close());

describe('Kafka batch consumer', () => {
  it('O5 commits nothing while the handler works, then the offset after the last message of the batch', async () => {
    const topic = `apipay.consumer-test.${randomUUID().slice(0, 8)}`;
    const groupId = `consumer-test-${topic}`;
    await admin.createTopic(topic, 1);
    const producer = await createProducer({ brokers: KAFKA_BROKERS, clientId: 'consumer-test-producer' });
    await producer.send(topic, [0, 1, 2].map((i) => ({ value: `message-${i}` })));

    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const seen: MessageBatch[] = [];
    const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: 'consumer-test', topic, groupId });
    try {
      await consumer.run(async (batch) => {
        seen.push(batch);
        await released; // the durable work of O4/O5 would happen here
      });
      await waitFor(() => seen.length > 0, 20_000, 'the first batch');
      const received = seen.flatMap((b) => b.messages.map((m) => m.value?.toString()));
      expect(received).toEqual(['message-0', 'message-1', 'message-2']);
      expect((await admin.committedOffsets(groupId, topic)).get(0)).toBe('-1');

      release();
      await waitFor(async () => (await admin.committedOffsets(groupId, topic)).get(0) === '3', 20_000, 'offset 3 committed');
    } finally {
      release();
      await consumer.stop();
      await producer.close();
    }
  });

  it.each(['in hand when stop() is called', 'handled before stop() and not yet committed'] as const)(
    'P2 a graceful stop commits the batch %s (the commit timer never fired)',
    async (when) => {
      const topic = `apipay.consumer-test.${randomUUID().slice(0, 8)}`;
      const groupId = `consumer-test-${topic}`;
      await admin.createTopic(topic, 1);
      const producer = await createProducer({ brokers: KAFKA_BROKERS, clientId: 'consumer-test-producer' });
      await producer.send(topic, [0, 1, 2].map((i) => ({ value: `message-${i}` })));
      let started = false;
      let handled = false;
      const consumer = createBatchConsumer({ brokers: KAFKA_BROKERS, clientId: 'consumer-test', topic, groupId, commitIntervalMs: 600_000 });
      try {
        await consumer.run(async () => {
          started = true;
          await new Promise((r) => setTimeout(r, when === 'in hand when stop() is called' ? 1500 : 0));
          handled = true;
        });
        await waitFor(() => (when === 'in hand when stop() is called' ? started : handled), 20_000, 'the batch');
        expect((await admin.committedOffsets(groupId, topic)).get(0)).toBe('-1');
        await consumer.stop();
        expect(handled).toBe(true);
        expect((await admin.committedOffsets(groupId, topic)).get(0)).toBe('3');
      } finally {
        await consumer.stop();
        await producer.close();
      }
    },
  );
});
