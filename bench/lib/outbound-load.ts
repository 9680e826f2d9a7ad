// P8: the load generator of bench:outbound in a process of its own (forked with an IPC channel by
// bench/lib/outbound-run.ts): the Kafka producer of the merchant's events (a burst as fast as Kafka takes them, or
// a steady rate on a clock, each event stamped with its scheduled time so a late sender counts as latency) and the
// merchant, which answers 200 (500 on /parked, after --merchant-delay-ms) and notes when each event first arrived.
// Neither shares the event loop of the dispatcher under test. bench:curves (./curves-run.ts) also spreads a burst over
// many merchants and counts deliveries per endpoint path. Messages: {id, op, ...} in, {id, ...answer} out.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProducer } from '../../src/kafka/kafkajs.js';
import { recordProcessStats } from './process-stats.js';

interface Setup {
  run: string;
  merchant: string;
  brokers: string[];
  topic: string;
  merchantDelayMs: number;
}
type Request =
  | ({ op: 'setup' } & Setup)
  | { op: 'burst'; count: number }
  | { op: 'steady'; rate: number; seconds: number }
  | { op: 'produce'; account: string; count: number; from?: number }
  | { op: 'spread'; accounts: string[]; count: number }
  | { op: 'deliveries' }
  | { op: 'count' }
  | { op: 'collect' }
  | { op: 'reset' }
  | { op: 'stats'; reset?: boolean };

const stats = recordProcessStats('load generator');
const receivedAt = new Map<string, number>();
const latencies: number[] = [];
/** When each event of the merchant was due (burst: when produced), by its sequence number. */
const producedAt = new Map<number, number>();
/** bench:curves: every distinct (endpoint path, event) received, so a fan-out to K endpoints counts K, and the last. */
const deliveries = new Set<string>();
let lastDeliveryAt = 0;
let setup: Setup;
let next = 0;
let producer: Awaited<ReturnType<typeof createProducer>>;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/parked') return void res.writeHead(500).end('parked');
    const now = Date.now();
    const event = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; data: { object: { produced_at_ms: number } } };
    deliveries.add(`${req.url} ${event.id}`);
    lastDeliveryAt = now;
    if (!receivedAt.has(event.id)) {
      receivedAt.set(event.id, now);
      latencies.push(now - event.data.object.produced_at_ms);
    }
    const answer = () => res.writeHead(200).end('ok');
    if (setup.merchantDelayMs > 0) setTimeout(answer, setup.merchantDelayMs);
    else answer();
  });
});

// Idle keep-alive sockets stay open a minute (Node's default is 5 s): under load 30 a few POSTs met a socket the merchant
// was closing (UND_ERR_SOCKET: other side closed, 4 in 43,000 attempts), and with the bench's 6 h retry wait the run
// then waited for them until its timeout.
server.keepAliveTimeout = 60_000;

function envelope(account: string, i: number, at: number) {
  if (account === setup.merchant) producedAt.set(i, at);
  return JSON.stringify({
    id: `evt_bench_${setup.run}_${account === setup.merchant ? '' : `${account.slice(-6)}_`}${i}`,
    object: 'event',
    type: 'payment.succeeded',
    created: Math.floor(at / 1000),
    livemode: false,
    merchant_account: account,
    data: { object: { id: `pay_${i}`, object: 'payment', amount: 1000, currency: 'eur', produced_at_ms: at } },
  });
}

/** bench:curves: `count` events as fast as Kafka takes them, round-robin over `accounts`, 500 per request. */
async function spread(accounts: string[], count: number) {
  for (let sent = 0; sent < count; sent += 500) {
    const batch = Array.from({ length: Math.min(500, count - sent) }, (_, j) => {
      const i = next++;
      return { key: String(i), value: envelope(accounts[(sent + j) % accounts.length]!, i, Date.now()) };
    });
    await producer.send(setup.topic, batch);
  }
}

async function produce(account: string, count: number, from?: number) {
  for (let sent = 0; sent < count; sent += 500) {
    const batch = Array.from({ length: Math.min(500, count - sent) }, (_, j) => {
      const i = from === undefined ? next++ : from + sent + j;
      return { key: String(i), value: envelope(account, i, Date.now()) };
    });
    await producer.send(setup.topic, batch);
  }
}

/**
 * `rate` events/s for `seconds` on a 1 ms clock, each stamped with its due time. The producer is idempotent with one
 * request in flight, so what falls due while a send is out goes in the next request (a producer's linger).
 */
async function steady(rate: number, seconds: number) {
  const total = Math.round(rate * seconds);
  const start = Date.now();
  const lags: number[] = [];
  let buffered: { key: string; value: string }[] = [];
  let sending: Promise<void> | null = null;
  const flush = () => {
    if (sending || !buffered.length) return;
    const batch = buffered;
    buffered = [];
    sending = producer.send(setup.topic, batch).then(() => {
      sending = null;
      flush();
    });
  };
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = Date.now();
      while (sent < total && start + (sent * 1000) / rate <= now) {
        const at = start + (sent * 1000) / rate;
        lags.push(now - at);
        buffered.push({ key: String(next), value: envelope(setup.merchant, next++, at) });
        sent += 1;
      }
      flush();
      if (sent >= total) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  while (sending || buffered.length) {
    flush();
    await sending;
  }
  lags.sort((a, b) => a - b);
  return { sendLagP99Ms: lags[Math.floor(lags.length * 0.99)] ?? 0 };
}

async function answer(request: Request): Promise<unknown> {
  switch (request.op) {
    case 'setup': {
      setup = request;
      producer = await createProducer({ brokers: request.brokers, clientId: 'bench-load' });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    }
    case 'burst':
      await produce(setup.merchant, request.count);
      return {};
    case 'steady':
      return steady(request.rate, request.seconds);
    case 'produce':
      await produce(request.account, request.count, request.from);
      return {};
    case 'spread':
      await spread(request.accounts, request.count);
      return {};
    case 'deliveries':
      return { count: deliveries.size, lastAt: lastDeliveryAt };
    case 'count':
      return { count: receivedAt.size };
    case 'collect':
      return {
        latencies,
        received: [...receivedAt].map(([id, at]) => [id, at, producedAt.get(Number(/_(\d+)$/.exec(id)?.[1])) ?? null]),
      };
    case 'reset':
      receivedAt.clear();
      deliveries.clear();
      latencies.length = 0;
      return {};
    case 'stats': {
      const snapshot = stats.snapshot();
      if (request.reset) stats.reset();
      return snapshot;
    }
  }
}

process.on('message', (message: { id: number } & Request) => {
  answer(message).then(
    (result) => process.send!({ id: message.id, result }),
    (error: Error) => process.send!({ id: message.id, error: error.message }),
  );
});
process.on('disconnect', () => {
  void producer?.close().finally(() => process.exit(0));
  server.close();
});
