// M11 in the demo: the demo shop also consumes from its own queue and topic. One endpoint publishes to a RabbitMQ
// queue on the stack's broker (only when RABBITMQ_URL says one runs: scripts/start.sh sets it unless APIPAY_RABBITMQ=0
// or RabbitMQ is not installed; otherwise the demo says so and goes on), one produces to a Kafka topic on the stack's
// Kafka. Both are registered through the admin API like the HTTP ones, signed in the Standard Webhooks scheme.
import amqp from 'amqplib';
import { createKafkaAdmin } from '../../src/kafka/kafkajs.js';

export const DEMO_QUEUE = 'demo-shop-events';
export const DEMO_TOPIC = 'demo-shop.events';

type Admin = <T>(method: string, path: string, body?: unknown) => Promise<T>;

export async function registerBrokerEndpoints(
  admin: Admin,
  options: { merchant: string; kafkaBrokers: string[]; rabbitmqUrl: string | undefined; say: (text: string) => void },
): Promise<void> {
  const { merchant, say } = options;
  const register = async (type: string, destination: Record<string, string>, what: string) => {
    const created = await admin<{ id: string; url: string }>('POST', '/webhook-endpoints', {
      merchant_account: merchant,
      type,
      destination,
      event_types: ['*'],
      livemode: false,
      description: `demo ${what}`,
    });
    say(`registered ${created.id} → ${created.url} (${what})`);
  };

  const kafka = createKafkaAdmin({ brokers: options.kafkaBrokers, clientId: 'demo-outbound-topic' });
  await kafka.createTopic(DEMO_TOPIC, 1).catch(() => {}); // a destination topic must exist
  await kafka.close();
  await register('kafka', { brokers: options.kafkaBrokers.join(','), topic: DEMO_TOPIC }, `Kafka topic ${DEMO_TOPIC}`);

  if (!options.rabbitmqUrl) {
    say('RabbitMQ is not running (APIPAY_RABBITMQ=0 or not installed): no RabbitMQ queue endpoint in this demo');
    return;
  }
  const url = new URL(options.rabbitmqUrl);
  const connection = await amqp.connect(options.rabbitmqUrl);
  const channel = await connection.createChannel();
  await channel.assertQueue(DEMO_QUEUE, { durable: true }); // the default exchange routes to it by name
  await connection.close();
  await register(
    'rabbitmq',
    {
      host: url.hostname,
      port: url.port || '5672',
      username: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      routing_key: DEMO_QUEUE,
    },
    `RabbitMQ queue ${DEMO_QUEUE}`,
  );
}
