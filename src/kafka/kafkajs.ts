// The kafkajs implementation of src/kafka/types.ts: manual offset commits, only of handled batches (O5).
// P2: an OffsetCommit took 12–13 ms (p50) on the stack's Kafka 4.1, and kafkajs fetches a broker's next batches only
// after the handlers of the previous fetch returned, so committing inline after every batch added that much to every
// event's latency. A handled batch's offset is now committed by a timer every `commitIntervalMs` (and when stopping):
// still never before its handler resolved; a crash redelivers at most that much more, which the dispatcher dedupes (O3).
import kafkajs, { type logCreator } from 'kafkajs';
import { describeDbError } from '../db/errors.js';
import type { BatchConsumer, BatchHandler, KafkaSettings, Producer } from './types.js';

const { Kafka, logLevel } = kafkajs;
const HEARTBEAT_MS = 3_000;
const COMMIT_INTERVAL_MS = 250;

/**
 * kafkajs's own log lines (JSON on stderr, like its default) without what a handler's error carries: when our batch
 * handler fails, kafkajs logs the error with its stack and every enumerable property; a database error's would hold
 * the query parameters (R1). The handler throws only safe errors, and this strips anything database-shaped anyway.
 */
export const safeLogCreator: logCreator = () => ({ namespace, level, label, log }) => {
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
    ...(settings.ssl ? { ssl: true } : {}),
    ...(settings.sasl ? { sasl: settings.sasl as kafkajs.SASLOptions } : {}),
    logLevel: logLevel.WARN,
    logCreator: safeLogCreator,
    retry: { initialRetryTime: 200, retries },
  });
}

export function createBatchConsumer(
  settings: KafkaSettings & { topic: string; groupId: string; fromBeginning?: boolean; commitIntervalMs?: number; sessionTimeoutMs?: number },
): BatchConsumer {
  const consumer = client(settings).consumer({
    groupId: settings.groupId,
    // How long a member that stopped heartbeating (a killed process) keeps its partitions: 30 s; the kill tests
    // set less (P11), the broker's floor is 6 s (group.min.session.timeout.ms).
    sessionTimeout: settings.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: HEARTBEAT_MS,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });
  let running = false;
  // The next offset to commit per partition: set only after that partition's batch was handled.
  const handled = new Map<number, string>();
  let committing: Promise<void> = Promise.resolve();
  const flush = () =>
    (committing = committing.then(async () => {
      if (handled.size === 0) return;
      const offsets = [...handled].map(([partition, offset]) => ({ topic: settings.topic, partition, offset }));
      handled.clear();
      // A failure (a rebalance took the partition) loses nothing: the next handled batch or the new owner's
      // redelivery (deduped) covers it.
      await consumer.commitOffsets(offsets).catch(() => {});
    }));
  let timer: NodeJS.Timeout | null = null;
  return {
    async run(handler: BatchHandler) {
      await consumer.connect();
      await consumer.subscribe({ topic: settings.topic, fromBeginning: settings.fromBeginning ?? true });
      running = true;
      timer = setInterval(() => void flush(), settings.commitIntervalMs ?? COMMIT_INTERVAL_MS);
      timer.unref();
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
          // O5: only now, after the handler committed its transaction and started its workflows.
          const last = batch.messages[batch.messages.length - 1]!.offset;
          resolveOffset(last);
          handled.set(batch.partition, String(BigInt(last) + 1n));
          // Stopping: the timer's commits are refused from now on, so this batch commits what is resolved itself.
          // With autoCommit off, commitOffsetsIfNecessary() without offsets commits nothing: pass them explicitly.
          if (!isRunning()) await commitOffsetsIfNecessary(uncommittedOffsets());
          await heartbeat();
        },
      });
    },
    async stop() {
      if (timer) clearInterval(timer);
      if (running) {
        await flush(); // while the runner still accepts commits
        await consumer.disconnect(); // waits for a batch in hand, which commits itself (above)
      }
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
    /** C11: whether the broker has the topic (asked before consuming, so a missing one is named as such). */
    async hasTopic(topic: string): Promise<boolean> {
      await connect();
      return (await admin.listTopics()).includes(topic);
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
