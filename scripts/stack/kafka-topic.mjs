// Creates the outbound topic idempotently (called by scripts/stack.sh up once Kafka answers).
import kafkajs from 'kafkajs';

const [topic, partitions] = process.argv.slice(2);
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
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: Number(partitions), replicationFactor: 1 }] });
    console.log(`created topic ${topic} with ${partitions} partitions`);
  }
} finally {
  await admin.disconnect();
}
