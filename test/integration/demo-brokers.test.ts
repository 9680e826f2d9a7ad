// M11, issue 32's done-when: the demo merchant (scripts/demo/brokers.ts, run by `npm start`'s outbound demo) gets one
// RabbitMQ queue endpoint and one Kafka topic endpoint, registered through the admin API on the stack's brokers and
// signed in the Standard Webhooks scheme; without RabbitMQ it says so and registers the Kafka one only. Real
// PostgreSQL, the stack's Kafka and RabbitMQ (RABBITMQ_URL; the RabbitMQ case is skipped without it).
import { describe, expect, it } from 'vitest';
import { DEMO_QUEUE, DEMO_TOPIC, registerBrokerEndpoints } from '../../scripts/demo/brokers.js';
import { TEST_ADMIN_TOKEN, KAFKA_BROKERS } from '../helpers/env.js';
import { testApp } from '../helpers/app.js';
import { uniqueMerchant } from '../helpers/outbound.js';
import { lazyTemporal, uniqueTaskQueues } from '../helpers/temporal.js';
import { useWorld } from '../helpers/world.js';

const world = useWorld({ label: 'demo-brokers' });
const RABBITMQ_URL = process.env.RABBITMQ_URL;

interface EndpointJson {
  id: string;
  type: string;
  url: string;
  signature_scheme: string;
  destination: Record<string, string> | null;
}

async function demoMerchant(rabbitmqUrl: string | undefined) {
  const app = testApp({ db: world.db, temporal: lazyTemporal(), taskQueues: uniqueTaskQueues('demo-brokers') });
  const admin = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await app.request(`/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as T;
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const merchant = uniqueMerchant('demo-shop');
  const said: string[] = [];
  await registerBrokerEndpoints(admin, { merchant, kafkaBrokers: KAFKA_BROKERS, rabbitmqUrl, say: (t) => said.push(t) });
  const list = await admin<{ data: EndpointJson[] }>('GET', `/webhook-endpoints?merchant_account=${merchant}&limit=100`);
  return { endpoints: list.data, said };
}

describe('M11 the demo merchant consumes from its own queue and topic', () => {
  it.skipIf(!RABBITMQ_URL)('M11 one RabbitMQ queue endpoint and one Kafka topic endpoint, Standard Webhooks signed', async () => {
    const { endpoints, said } = await demoMerchant(RABBITMQ_URL);
    expect(endpoints.map((e) => e.type).sort()).toEqual(['kafka', 'rabbitmq']);
    const rabbit = endpoints.find((e) => e.type === 'rabbitmq')!;
    const kafka = endpoints.find((e) => e.type === 'kafka')!;
    expect(rabbit.url).toContain(`queue=${DEMO_QUEUE}`);
    expect(rabbit.destination).toMatchObject({ routing_key: DEMO_QUEUE, exchange: '' });
    expect(rabbit.destination).not.toHaveProperty('password');
    expect(kafka.destination).toMatchObject({ topic: DEMO_TOPIC, brokers: KAFKA_BROKERS.join(',') });
    for (const e of endpoints) expect(e.signature_scheme).toBe('standard');
    expect(said.join('\n')).toContain(`RabbitMQ queue ${DEMO_QUEUE}`);
  });

  it('M11 without RabbitMQ the demo says so and registers the Kafka topic endpoint only', async () => {
    const { endpoints, said } = await demoMerchant(undefined);
    expect(endpoints.map((e) => e.type)).toEqual(['kafka']);
    expect(said.join('\n')).toMatch(/RabbitMQ is not running/);
  });
});
