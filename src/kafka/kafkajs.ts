// The kafkajs implementation of src/kafka/types.ts: manual offset commits after each handled batch (O5).
import kafkajs, { type logCreator } from 'kafkajs';
import { describeDbError } from '../db/errors.js';
import type { BatchConsumer, BatchHandler, KafkaSettings, Producer } from './types.js';

const { Kafka, logLevel } = kafkajs;
const HEARTBEAT_MS = 3_000;

/**
 * kafkajs's own log lines (JSON on stderr, like its default) without what a handler's error carries: when our batch
 * handler fails, kafkajs logs the error with its stack and every enumerable property; a database error's would hold
 * the query parameters (R1). The handler throws only safe errors, and this strips anything database-shaped anyway.
 */
const safeLogCreator: logCreator = () => ({ namespace, level, label, log }) => {
  const { message, timestamp, stack: _stack, error, ...rest } = log as Record<string, unknown>;
  const db = describeDbError(error);
  const entry = { level: label, timestamp, logger: 'kafkajs', namespace, message, ...rest, ...(error !== undefined ? { error: db ?? safeText(error) } : {}) };
  (level <= logLevel.WARN ? console.error : console.log)(JSON.stringify(entry));
};
const safeText = (error: unknown) => String(error instanceof Error ? error.message : error).split('\n')[0]!.slice(0, 200);

function client(settings: KafkaSettings, retries = 8) {
  return new Kafka({
    clientId: settings.clientId,
    brokers: settings.brokers,
    logLevel: logLevel.WARN,
    logCreator: safeLogCreator,
    retry: { initialRetryTime: 200, retries },
  });
}

export function createBatchConsumer(settings: KafkaSettings & { topic: string; groupId: string; fromBeginning?: boolean }): BatchConsumer {
  const consumer = client(settings).consumer({
    groupId: settings.groupId,
    sessionTimeout: 30_000,
    heartbeatInterval: HEARTBEAT_MS,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });
  let running = false;
  return {
    async run(handler: BatchHandler) {
      await consumer.connect();
      await consumer.subscribe({ topic: settings.topic, fromBeginning: settings.fromBeginning ?? true });
      running = true;
      await consumer.run({
        eachBatchAutoResolve: false,
        autoCommit: false,
        partitionsConsumedConcurrently: 4,
        eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary, uncommittedOffsets, heartbeat, isRunning, isStale }) => {
          if (!isRunning() || isStale() || batch.messages.length === 0) return;
          // A large batch (fan-out + many workflow starts) can outlast the session timeout: keep the membership alive.
          const beat = setInterval(() => void heartbeat().catch(() => {}), HEARTBEAT_MS);
          try {
            await handler({
              topic: batch.topic,
              partition: batch.partition,
              lag: Number(batch.offsetLag()),
              messages: batch.messages.map((m) => ({
                topic: batch.topic,
                partition: batch.partition,
                offset: m.offset,
                key: m.key,
                value: m.value,
                timestamp: m.timestamp,
                headers: Object.fromEntries(
                  Object.entries(m.headers ?? {}).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('utf8') : String(v ?? '')]),
                ),
              })),
            });
          } finally {
            clearInterval(beat);
          }
          // O5: only now, after the handler committed its transaction and started its workflows. With autoCommit off,
          // commitOffsetsIfNecessary() without offsets commits nothing: pass the resolved ones explicitly.
          resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
          await commitOffsetsIfNecessary(uncommittedOffsets());
          await heartbeat();
        },
      });
    },
    async stop() {
      if (running) await consumer.disconnect();
      running = false;
    },
  };
}

export async function createProducer(settings: KafkaSettings): Promise<Producer> {
  const producer = client(settings).producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return {
    async send(topic, messages) {
      await producer.send({ topic, messages: messages.map((m) => ({ key: m.key ?? null, value: m.value, headers: m.headers })) });
    },
    close: () => producer.disconnect(),
  };
}

/** Readiness probe (fails fast, reconnects on the next probe) and topic creation. */
export function createKafkaAdmin(settings: KafkaSettings) {
  const admin = client(settings, 1).admin();
  let connected: Promise<void> | null = null;
  const connect = async () => {
    try {
      connected ??= admin.connect();
      await connected;
    } catch (error) {
      connected = null; // a failed connect is not cached: the next probe tries again
      throw error;
    }
  };
  return {
    async ping(): Promise<void> {
      await connect();
      await admin.describeCluster();
    },
    /** Committed offset per partition of a consumer group (-1 where nothing was committed). */
    async committedOffsets(groupId: string, topic: string): Promise<Map<number, string>> {
      await connect();
      const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map((entry?.partitions ?? []).map((p) => [p.partition, p.offset]));
    },
    /** Idempotent and quiet: asking the broker to create an existing topic makes kafkajs log an ERROR (C10). */
    async createTopic(topic: string, numPartitions: number): Promise<void> {
      await connect();
      if ((await admin.listTopics()).includes(topic)) return;
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions, replicationFactor: 1 }] });
    },
    async close() {
      if (connected) await admin.disconnect();
    },
  };
}
