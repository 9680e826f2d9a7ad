// M11: producing one event to a merchant's Kafka topic (kafkajs): a pooled idempotent producer per destination
// (acks = all), the stored bytes as the value, the event id as the key, the signature headers (webhook-id,
// webhook-timestamp, webhook-signature) as Kafka headers; success once every in-sync replica has it. Every socket,
// to the bootstrap brokers and to each broker the cluster's metadata names, goes through O15's guard. kafkajs's own
// retries are short (the attempt's timeout bounds them); our retry schedule does the rest.
import { Socket, connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import kafkajs from 'kafkajs';
import { safeLogCreator } from '../../kafka/kafkajs.js';
import type { brokerSocketGuard } from '../url-safety.js';
import type { Pooled } from './pool.js';
import { withTimeout } from './rabbitmq-publisher.js';

const { Kafka, logLevel } = kafkajs;
type Guard = ReturnType<typeof brokerSocketGuard>;

export interface KafkaConnection extends Pooled {
  publish(body: Buffer, headers: Record<string, string>, eventId: string, timeoutMs: number): Promise<void>;
}

function guardedSocketFactory(guard: Guard): kafkajs.ISocketFactory {
  return ({ host, port, ssl, onConnect }) => {
    try {
      guard.check(host);
    } catch (error) {
      const refused = new Socket();
      process.nextTick(() => refused.destroy(error as Error));
      return refused;
    }
    const lookup = guard.lookup as never;
    const socket = ssl
      ? tlsConnect({ host, port, servername: host, lookup, ...ssl }, onConnect)
      : netConnect({ host, port, lookup }, onConnect);
    socket.setKeepAlive(true, 60_000);
    return socket;
  };
}

export async function openKafka(
  config: Record<string, string>,
  credentials: Record<string, string>,
  guard: Guard,
  timeoutMs: number,
): Promise<KafkaConnection> {
  const mechanism = config.sasl_mechanism ?? 'none';
  const kafka = new Kafka({
    clientId: 'apipay-webhooks',
    brokers: config.brokers!.split(',').map((b) => b.trim()),
    ...(config.tls === 'true' ? { ssl: true } : {}),
    ...(mechanism !== 'none'
      ? { sasl: { mechanism, username: config.username!, password: credentials.password! } as kafkajs.SASLOptions }
      : {}),
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    socketFactory: guardedSocketFactory(guard),
    // Nothing: a merchant's broker failing is the attempt's recorded outcome, not a line per retry in our logs (and
    // the idempotent producer's warning about bounded retries is about what our attempts bound on purpose).
    logLevel: logLevel.NOTHING,
    logCreator: safeLogCreator,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 2 },
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  let broken = false;
  producer.on(producer.events.DISCONNECT, () => void (broken = true));
  await withTimeout(producer.connect(), timeoutMs, 'connecting to the cluster', () => void producer.disconnect().catch(() => {}));
  return {
    usable: () => !broken,
    async close() {
      broken = true;
      await producer.disconnect().catch(() => {});
    },
    async publish(body, headers, eventId, publishTimeoutMs) {
      await withTimeout(
        producer.send({ topic: config.topic!, acks: -1, messages: [{ key: eventId, value: body, headers }] }),
        publishTimeoutMs,
        'waiting for acks=all',
      );
    },
  };
}
