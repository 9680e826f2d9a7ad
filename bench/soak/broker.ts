// R11, M11: the soak's broker destination. The merchant's RabbitMQ queue on the soak's own broker (scripts/stack/
// rabbitmq.sh on the soak's ports and node name), registered as a `rabbitmq` endpoint beside the HTTP ones, and a
// consumer that counts every message it receives by its webhook-id (the event id: one delivery per event on this one
// endpoint) and webhook-timestamp (when the attempt signed it). It acks after counting, and reconnects when the broker
// is killed; a message the broker hands out again (redelivered: its ack was lost with the broker) is counted apart,
// not as another attempt. The end checks are bench/soak/broker-invariants.ts.
import amqp, { type ChannelModel } from 'amqplib';
import type { SoakEndpoint } from './outbound.js';

export const SOAK_QUEUE = 'soak-events';
/** The merchant-side user scripts/stack/rabbitmq.sh creates (a local broker's, not a secret of anyone's). */
const USER = process.env.RABBITMQ_APP_USER ?? 'apipay-merchant';
const PASSWORD = process.env.RABBITMQ_APP_PASSWORD ?? 'local-broker-pw-7c41d2';

export interface BrokerMessage {
  eventId: string;
  /** webhook-timestamp: the attempt's signing time (s). */
  timestamp: string;
  signature: string;
  at: number;
}

export interface BrokerConsumer {
  messages: BrokerMessage[];
  /** Messages handed out again after a broker restart that the consumer had already counted (not attempts). */
  redeliveredSeen: number;
  reconnects: number;
  close(): Promise<void>;
}

const text = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('utf8') : value === undefined ? '' : String(value));

export async function startBrokerConsumer(port: number): Promise<BrokerConsumer> {
  const url = `amqp://${encodeURIComponent(USER)}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`;
  const messages: BrokerMessage[] = [];
  const seen = new Set<string>();
  const consumer: BrokerConsumer = { messages, redeliveredSeen: 0, reconnects: -1, close: async () => undefined };
  let connection: ChannelModel | undefined;
  let closing = false;

  const open = async (): Promise<void> => {
    consumer.reconnects += 1;
    const model = await amqp.connect(url, { timeout: 5_000 });
    model.on('error', () => undefined);
    const channel = await model.createChannel();
    channel.on('error', () => undefined);
    await channel.assertQueue(SOAK_QUEUE, { durable: true }); // before the endpoint exists: never unroutable
    await channel.prefetch(100);
    await channel.consume(SOAK_QUEUE, (message) => {
      if (!message) return;
      const headers = message.properties.headers ?? {};
      const m = {
        eventId: text(headers['webhook-id']),
        timestamp: text(headers['webhook-timestamp']),
        signature: text(headers['webhook-signature']),
        at: Date.now(),
      };
      const key = `${m.eventId} ${m.signature}`;
      if (message.fields.redelivered && seen.has(key)) consumer.redeliveredSeen += 1;
      else messages.push(m);
      seen.add(key);
      channel.ack(message);
    });
    connection = model;
    model.once('close', () => {
      connection = undefined;
      if (!closing) void reconnect();
    });
  };
  const reconnect = async () => {
    while (!closing) {
      try {
        return await open();
      } catch {
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  };
  await open();
  consumer.close = async () => {
    closing = true;
    await connection?.close().catch(() => undefined);
  };
  return consumer;
}

/** The broker endpoint, registered through the admin API like the HTTP ones (signed in the Standard Webhooks scheme). */
export async function registerBrokerEndpoint(options: {
  apiUrl: string;
  adminToken: string;
  merchant: string;
  port: number;
}): Promise<SoakEndpoint> {
  const response = await fetch(`${options.apiUrl}/admin/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      merchant_account: options.merchant,
      type: 'rabbitmq',
      destination: { host: '127.0.0.1', port: String(options.port), username: USER, password: PASSWORD, routing_key: SOAK_QUEUE },
      event_types: ['*'],
      livemode: false,
      description: 'soak RabbitMQ queue',
    }),
  });
  if (response.status !== 201) throw new Error(`registering the RabbitMQ endpoint: ${response.status} ${await response.text()}`);
  return { id: ((await response.json()) as { id: string }).id, path: `rabbitmq:${SOAK_QUEUE}`, broker: true };
}
