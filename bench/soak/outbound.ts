// Outbound traffic of the soak (R11): one endpoint per merchant behaviour, registered through the admin API, and
// events produced to Kafka at a steady rate. A send Kafka did not acknowledge is sent again (same event id).
import { createProducer } from '../../src/kafka/kafkajs.js';
import type { Producer } from '../../src/kafka/types.js';
import { MERCHANT_PATHS } from './merchants.js';
import { pick, type Random } from './random.js';

export interface SoakEndpoint {
  id: string;
  path: string;
  /** M11: a RabbitMQ queue (bench/soak/broker.ts), checked by its consumer's messages, not by POSTs. */
  broker?: boolean;
}

export async function registerEndpoints(options: { apiUrl: string; adminToken: string; merchantsUrl: string; merchant: string }): Promise<SoakEndpoint[]> {
  const endpoints: SoakEndpoint[] = [];
  for (const path of MERCHANT_PATHS) {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const response = await fetch(`${options.apiUrl}/admin/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ merchant_account: options.merchant, url: `${options.merchantsUrl}${path}`, event_types: ['*'], livemode: false }),
      }).catch(() => undefined);
      if (response?.status === 201 || response?.status === 200) {
        endpoints.push({ id: ((await response.json()) as { id: string }).id, path });
        break;
      }
      if (response && response.status < 500) throw new Error(`registering ${path}: ${response.status} ${await response.text()}`);
      if (Date.now() > deadline) throw new Error(`registering ${path}: the API did not answer within 120 s`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  return endpoints;
}

export interface OutboundTraffic {
  /** Event ids Kafka acknowledged. */
  acked: string[];
  unacked: string[];
  /** When each event was first produced (ms), for latency figures (the cluster drill's p99). */
  sentAt: Map<string, number>;
  sent: number;
  /** Poison messages (1 in 40) Kafka acknowledged: each must be quarantined while its partition moves on (R1). */
  poisonAcked: number;
  stop(): Promise<void>;
}

// O21: catalog types whose data.object is a payment (the dispatcher quarantines an event that breaks its schema).
const TYPES = ['payment.succeeded', 'payment.failed', 'payment.pending'];

export async function startOutboundTraffic(options: {
  brokers: string[];
  topic: string;
  merchant: string;
  ratePerS: number;
  random: Random;
  seed: number;
  /** Poison with U+0000 in merchant_account (R1's reproduction) besides invalid JSON and missing fields. */
  nulPoison: boolean;
}): Promise<OutboundTraffic> {
  let producer: Producer | undefined;
  const acked: string[] = [];
  const unacked: string[] = [];
  const sentAt = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  let poisonAcked = 0;

  const connect = async () => (producer ??= await createProducer({ brokers: options.brokers, clientId: 'apipay-soak' }));
  const produce = async (id: string, value: string, poison = false) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await (await connect()).send(options.topic, [{ key: id, value }]);
        return void (poison ? (poisonAcked += 1) : acked.push(id));
      } catch {
        const broken = producer;
        producer = undefined;
        await broken?.close().catch(() => undefined);
        if (Date.now() > deadline) return void (poison || unacked.push(id));
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  };
  const poisonOf = (id: string) => {
    const kinds = ['{not json', JSON.stringify({ id, object: 'event' }), `{"id":"${id}","object":"event","type":"x","created":-1}`];
    if (options.nulPoison) kinds.push(JSON.stringify({ id, object: 'event', type: 'payment.succeeded', created: 1, livemode: false, merchant_account: 'acct_\u0000', data: { object: {} } }));
    return pick(options.random, kinds);
  };
  const tick = () => {
    sent += 1;
    const id = `evt_soak_${options.seed}_out_${sent}`;
    if (options.random() < 1 / 40) {
      const p = produce(`${id}_poison`, poisonOf(`${id}_poison`), true).finally(() => inFlight.delete(p));
      inFlight.add(p);
      return;
    }
    const envelope = {
      id,
      object: 'event',
      type: pick(options.random, TYPES),
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      merchant_account: options.merchant,
      data: { object: { id: `pay_${sent}`, object: 'payment', amount: 100 + sent, currency: 'eur' } },
    };
    sentAt.set(id, Date.now());
    const p = produce(id, JSON.stringify(envelope)).finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  await connect();
  const timer = setInterval(tick, 1_000 / options.ratePerS);
  return {
    acked,
    unacked,
    sentAt,
    get sent() {
      return sent;
    },
    get poisonAcked() {
      return poisonAcked;
    },
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
      await producer?.close().catch(() => undefined);
    },
  };
}
