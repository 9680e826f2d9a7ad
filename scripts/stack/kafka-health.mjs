// R16: Kafka's health check for scripts/stack.sh (up, status): the broker answers a metadata request
// (describeCluster) within a few seconds. Exit 0 when it does, 1 otherwise; a live pid or an open port is not enough
// (a stopped or wedged JVM still holds its port). Quiet: kafkajs's own logging is off.
import { clearTimeout, setTimeout } from 'node:timers';
import kafkajs from 'kafkajs';

const timeoutMs = Number(process.env.KAFKA_HEALTH_TIMEOUT_MS ?? 5000);
const kafka = new kafkajs.Kafka({
  clientId: 'apipay-stack-health',
  brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
  logLevel: kafkajs.logLevel.NOTHING,
  connectionTimeout: timeoutMs,
  requestTimeout: timeoutMs,
  retry: { retries: 0 },
});
const admin = kafka.admin();
const deadline = setTimeout(() => process.exit(1), timeoutMs + 1000);
try {
  await admin.connect();
  const cluster = await admin.describeCluster();
  if (cluster.brokers.length === 0) process.exit(1);
  await admin.disconnect();
  clearTimeout(deadline);
} catch {
  process.exit(1);
}
