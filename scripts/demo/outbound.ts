// Outbound demo for `npm start`: a local merchant receiver on 127.0.0.1:4000 that verifies ApiPay-Signature,
// demo endpoints registered through the admin API (M11: a Kafka topic and a RabbitMQ queue among them, brokers.ts), and sample events produced to Kafka every few seconds, so a
// newcomer sees DELIVERED, RETRYING and FAILED in the Temporal UI and through the admin API.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { createKafkaAdmin, createProducer } from '../../src/kafka/kafkajs.js';
import { loadSettings } from '../../src/lib/settings.js';
import { DELIVERY_STATUSES } from '../../src/shared/outbound.js';
import { SIGNATURE_HEADER, verify } from '../../src/signing/index.js';
import { registerBrokerEndpoints } from './brokers.js';
import { DEMO_TYPES, demoEnvelope } from './events.js';

const { env, profile } = loadSettings('demo');
const API = `http://${env.API_HOST}:${env.API_PORT}/admin/v1`;
const RECEIVER_PORT = Number(process.env.DEMO_RECEIVER_PORT ?? 4000);
const MERCHANT = 'acct_demo_shop';
const INTERVAL_MS = Number(process.env.DEMO_EVENT_INTERVAL_MS ?? 4000);
const say = (text: string) => console.log(`[demo-outbound] ${text}`);

async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${API}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok && response.status !== 404) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

// --- the merchant's side -------------------------------------------------------------------------------------
const secrets = new Map<string, string>(); // receiver path → whsec_ of the endpoint registered for it
const attemptsSeen = new Map<string, number>();
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks); // verify the raw bytes, before any JSON parsing
    const path = req.url ?? '/';
    const secret = secrets.get(path);
    let verified = false;
    try {
      if (secret) verified = verify(raw, req.headers[SIGNATURE_HEADER.toLowerCase()] as string, secret, { toleranceSeconds: 300 }) !== undefined;
    } catch (error) {
      say(`✗ ${path} rejected a request: ${(error as Error).message}`);
      res.writeHead(400).end('bad signature');
      return;
    }
    const event = JSON.parse(raw.toString('utf8')) as { id: string; type: string; data: { object: { sequence: number } } };
    const attempt = (attemptsSeen.get(`${path} ${event.id}`) ?? 0) + 1;
    attemptsSeen.set(`${path} ${event.id}`, attempt);
    // /shop is flaky for every third event (two failures, then success); /always-503 is down for good, as its
    // name says: it shows FAILED deliveries and, after its failure streak, the endpoint auto-disabled (O13).
    const fail = path === '/always-503' || (event.data.object.sequence % 3 === 0 && attempt <= 2);
    const status = fail ? 503 : 200;
    say(`${fail ? '✗' : '✓'} ${path} ${event.type} ${event.id} attempt ${attempt}: signature ${verified ? 'verified' : 'unchecked'}, answering ${status}`);
    res.writeHead(status, { 'content-type': 'text/plain' }).end(fail ? 'temporarily unavailable' : 'ok');
  });
});
await new Promise<void>((resolve) => server.listen(RECEIVER_PORT, '127.0.0.1', resolve));
say(`merchant receiver on http://127.0.0.1:${RECEIVER_PORT} (verifies ${SIGNATURE_HEADER})`);

// --- our side: endpoints via the admin API --------------------------------------------------------------------
interface EndpointJson { id: string; url: string; secret?: string }
const existing = await admin<{ data: EndpointJson[] }>('GET', `/webhook-endpoints?merchant_account=${MERCHANT}&limit=100`);
for (const endpoint of existing.data) await admin('DELETE', `/webhook-endpoints/${endpoint.id}`); // secrets are shown once: start fresh
for (const [path, eventTypes] of [
  ['/shop', ['*']],
  ['/always-503', ['payment.failed']],
] as const) {
  const created = await admin<EndpointJson>('POST', '/webhook-endpoints', {
    merchant_account: MERCHANT,
    url: `http://127.0.0.1:${RECEIVER_PORT}${path}`,
    event_types: eventTypes,
    livemode: false,
    description: path === '/always-503' ? 'demo endpoint that always answers 503 (never recovers)' : `demo endpoint ${path}`,
  });
  secrets.set(path, created.secret!);
  say(`registered ${created.id} → ${created.url} for ${eventTypes.join(', ')}`);
}

// M11: a Kafka topic endpoint and (when the stack runs RabbitMQ) a RabbitMQ queue endpoint beside the HTTP ones.
await registerBrokerEndpoints(admin, { merchant: MERCHANT, kafkaBrokers: env.KAFKA_BROKERS, rabbitmqUrl: process.env.RABBITMQ_URL || undefined, say }).catch(
  (error) => say(`broker endpoints not registered: ${(error as Error).message}`),
);

// --- the business service: events to Kafka --------------------------------------------------------------------
const { topic } = profile.outbound.kafka;
const kafkaAdmin = createKafkaAdmin({ brokers: env.KAFKA_BROKERS, clientId: 'demo-outbound' });
await kafkaAdmin.createTopic(topic, 3).catch(() => {}); // usually created by scripts/stack.sh (then a no-op)
await kafkaAdmin.close();
const producer = await createProducer({ brokers: env.KAFKA_BROKERS, clientId: 'demo-outbound' });
const types = DEMO_TYPES; // catalog types only (M8), valid against their schemas or the dispatcher quarantines them (O21)
let sequence = 0;
const produce = async () => {
  sequence++;
  const id = `evt_demo_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  const type = types[sequence % types.length]!;
  const envelope = demoEnvelope(type, sequence, id, MERCHANT); // typed by the catalog (M10)
  await producer.send(topic, [{ key: MERCHANT, value: JSON.stringify(envelope) }]);
  say(`produced ${type} ${id} (#${sequence})`);
};
const timer = setInterval(() => void produce().catch((e) => say(`produce failed: ${(e as Error).message}`)), INTERVAL_MS);

// --- what an operator sees ---------------------------------------------------------------------------------------
const report = setInterval(async () => {
  try {
    const counts: string[] = [];
    for (const status of DELIVERY_STATUSES) {
      const page = await admin<{ data: unknown[]; has_more: boolean }>('GET', `/webhook-deliveries?status=${status}&limit=100`);
      counts.push(`${status} ${page.data.length}${page.has_more ? '+' : ''}`);
    }
    say(`deliveries: ${counts.join(' · ')} — Temporal UI ${env.TEMPORAL_UI_URL}/namespaces/default/workflows?query=${encodeURIComponent(`MerchantAccount="${MERCHANT}"`)}`);
  } catch (error) {
    say(`admin API not reachable: ${(error as Error).message}`);
  }
}, 15_000);
say(`producing an event every ${INTERVAL_MS} ms to ${topic}; retries follow the demo schedule ${profile.outbound.retry_schedule.map((ms) => `${ms / 1000}s`).join(', ')}`);

const stop = async () => {
  clearInterval(timer);
  clearInterval(report);
  await producer.close().catch(() => {});
  server.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
