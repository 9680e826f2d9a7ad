// P12 (issue 33): the load generator and the merchants of bench:outage, in a process of its own (forked with an IPC
// channel by bench/lib/outage-run.ts). A steady flow of events on a clock (each stamped with its due time), one
// merchant in `share` of them and the rest spread over the others; one HTTP server answers every endpoint
// (/m<merchant>/e<endpoint>): 200, except the down merchant while it is down (503, or never within the request
// timeout). It notes each healthy delivery's produce-to-receive time and every POST the down merchant gets.
// With `serve: 'healthy'` this process serves the healthy merchants only, and a second copy of it forked with
// `serve: 'down'` (no producer) serves the down merchant: in production the returning merchant's server is not the
// healthy merchants', and sharing one event loop makes the recovery's burst of POSTs to it delay the healthy ones'
// receipt here, in the measuring process (bench:outage --down-merchant shared|process).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProducer } from '../../src/kafka/kafkajs.js';
import { recordProcessStats } from './process-stats.js';

interface Setup {
  run: string;
  merchants: string[];
  /** The down merchant's share of the events (merchant 0). */
  share: number;
  brokers: string[];
  topic: string;
  /** Which merchants this process serves; `down` makes no producer. */
  serve: 'all' | 'healthy' | 'down';
}
type Request =
  | ({ op: 'setup' } & Setup)
  | { op: 'start'; rate: number }
  | { op: 'stop' }
  | { op: 'mode'; mode: 'up' | '503' | 'timeout' }
  | { op: 'collect' }
  | { op: 'count' }
  | { op: 'stats' };

const stats = recordProcessStats('load generator + merchants');
const processName = { all: 'load generator + merchants', healthy: 'load generator + healthy merchants', down: 'down merchant' };
let setup: Setup;
let producer: Awaited<ReturnType<typeof createProducer>>;
let mode: 'up' | '503' | 'timeout' = 'up';
const held = new Set<ServerResponse>();
/** Healthy merchants: [produced, received] of each (event, endpoint) pair's first receipt. */
const healthy: [number, number][] = [];
const seen = new Set<string>();
/** Every POST the down merchant got: [endpoint index, at, status answered, produced, 1 when it had this event before]. */
const downPosts: [number, number, number, number, number][] = [];
const downSeen = new Set<string>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    const [, m, e] = /^\/m(\d+)\/e(\d+)/.exec(req.url ?? '') ?? [];
    const event = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; data: { object: { produced_at_ms: number } } };
    const produced = event.data.object.produced_at_ms;
    if (m === '0') {
      const status = mode === 'up' ? 200 : mode === '503' ? 503 : 0;
      const key = `${event.id}/${e}`;
      downPosts.push([Number(e), now, status, produced, downSeen.has(key) ? 1 : 0]); // a repeat: a retry, not a first POST
      downSeen.add(key);
      if (mode === 'timeout') return void held.add(res); // never answered: the attempt ends at the request timeout
      return void res.writeHead(status).end(status === 200 ? 'ok' : 'down');
    }
    const key = `${event.id}/${e}`;
    if (!seen.has(key)) {
      seen.add(key);
      healthy.push([produced, now]);
    }
    res.writeHead(200).end('ok');
  });
});
server.keepAliveTimeout = 60_000;

let next = 0;
function envelope(i: number, at: number) {
  // merchant 0 takes `share` of the events, evenly interleaved; the rest go round the others
  const down = Math.floor((i + 1) * setup.share) > Math.floor(i * setup.share);
  const merchant = down ? 0 : 1 + (i % (setup.merchants.length - 1));
  return JSON.stringify({
    id: `evt_outage_${setup.run}_${i}`,
    object: 'event',
    type: 'payment.succeeded',
    created: Math.floor(at / 1000),
    livemode: false,
    merchant_account: setup.merchants[merchant],
    data: { object: { id: `pay_${i}`, object: 'payment', amount: 1000, currency: 'eur', produced_at_ms: at } },
  });
}

let producing: Promise<void> | null = null;
let stopAsked = false;
/** `rate` events/s on a 1 ms clock until stop; what falls due while a send is out goes in the next request. */
function start(rate: number) {
  stopAsked = false;
  const begin = Date.now();
  let sent = 0;
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
  producing = new Promise<void>((resolve) => {
    const tick = () => {
      const now = Date.now();
      while (!stopAsked && begin + (sent * 1000) / rate <= now) {
        const at = begin + (sent * 1000) / rate;
        buffered.push({ key: String(next), value: envelope(next++, at) });
        sent += 1;
      }
      flush();
      if (stopAsked) {
        const drain = async () => {
          while (sending || buffered.length) {
            flush();
            await sending;
          }
          resolve();
        };
        void drain();
      } else setTimeout(tick, 1);
    };
    tick();
  });
}

async function answer(request: Request): Promise<unknown> {
  switch (request.op) {
    case 'setup': {
      setup = request;
      if (request.serve !== 'down') producer = await createProducer({ brokers: request.brokers, clientId: 'bench-outage-load' });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    }
    case 'start':
      start(request.rate);
      return {};
    case 'stop':
      stopAsked = true;
      await producing;
      return { produced: next };
    case 'mode':
      mode = request.mode;
      if (mode !== 'timeout') for (const res of held) res.destroy();
      held.clear();
      return {};
    case 'collect':
      return { healthy, downPosts };
    case 'count':
      return { count: healthy.length };
    case 'stats': {
      const snapshot = stats.snapshot();
      stats.reset();
      return { ...snapshot, process: processName[setup.serve] };
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
  for (const res of held) res.destroy();
  void (producer?.close() ?? Promise.resolve()).finally(() => process.exit(0));
  server.close();
});
