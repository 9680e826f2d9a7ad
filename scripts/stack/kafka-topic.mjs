// Creates the outbound topic idempotently (called by scripts/stack.sh up once Kafka answers), then waits for the
// group and producer-id coordinators of a fresh broker to be ready, so the apps' first connect does not log an
// ERROR about a coordinator that is not available yet (C10). Quiet: kafkajs's own logging is off here.
// Issue 34 (R22): KAFKA_REPLICATION_FACTOR (default 1, the stack's one broker) and KAFKA_MIN_ISR (the topic's
// min.insync.replicas, unset = the broker's default) for scripts/cluster.sh's three brokers (3 and 2).
import kafkajs from 'kafkajs';

const [topic, partitions] = process.argv.slice(2);
const replicationFactor = Number(process.env.KAFKA_REPLICATION_FACTOR ?? 1);
const minIsr = process.env.KAFKA_MIN_ISR;
const kafka = new kafkajs.Kafka({
  clientId: 'apipay-stack',
  brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  logLevel: kafkajs.logLevel.NOTHING,
  retry: { retries: 10 },
});
const admin = kafka.admin();
await admin.connect();
try {
  const existing = await admin.listTopics();
  if (!existing.includes(topic)) {
    const configEntries = minIsr ? [{ name: 'min.insync.replicas', value: minIsr }] : [];
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: Number(partitions), replicationFactor, configEntries }],
    });
    console.log(`created topic ${topic} with ${partitions} partitions, replication factor ${replicationFactor}${minIsr ? `, min.insync.replicas ${minIsr}` : ''}`);
  }
  // FindCoordinator creates __consumer_offsets on a fresh broker; kafkajs retries until it is loaded.
  await admin.describeGroups(['apipay-stack-warmup']);
} finally {
  await admin.disconnect();
}
// An idempotent producer's connect asks for a producer id (InitProducerId), as the apps' producers do.
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
await producer.connect();
await producer.disconnect();
