// P8: the load generator of bench:ingress in a process of its own (forked with an IPC channel by bench/ingress.ts),
// so neither the ingress under test nor the bench's own process shares its event loop: closed loop (./http-load.ts)
// or open loop (./open-loop.ts) of unique Stripe-signed payment.succeeded webhooks, answered with the result and this
// process's event-loop delay and GC over the phase (./process-stats.ts). Messages: {id, op, ...} in, {id, result} out.
import { randomUUID } from 'node:crypto';
import { stripePayload } from '../../src/sandbox/payloads.js';
import { stripeSignatureHeader } from '../../src/sandbox/signing.js';
import { runLoad } from './http-load.js';
import { BENCH_PROVIDER, BENCH_SECRET } from './ingress-bench.js';
import { runOpenLoop } from './open-loop.js';
import { recordProcessStats } from './process-stats.js';

const stats = recordProcessStats('load generator');
const run = randomUUID().slice(0, 8);
let sequence = 0;
function nextWebhook() {
  sequence += 1;
  const { body } = stripePayload({
    id: `evt_bench_${run}_${sequence}`,
    type: 'payment.succeeded',
    reference: `pi_bench_${run}_${sequence}`,
    amountMinor: 1000 + (sequence % 500),
    currency: 'EUR',
  });
  return {
    path: `/webhooks/${BENCH_PROVIDER}`,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': stripeSignatureHeader(body, BENCH_SECRET, Math.floor(Date.now() / 1000)),
    },
    body,
  };
}

type Request =
  | { op: 'closed'; url: string; connections: number; durationMs: number; warmupMs: number }
  | { op: 'open'; url: string; rate: number; durationMs: number; warmupMs: number };

async function answer(request: Request) {
  stats.reset();
  const result =
    request.op === 'closed'
      ? await runLoad({
          url: request.url,
          connections: request.connections,
          durationMs: request.durationMs,
          warmupMs: request.warmupMs,
          next: nextWebhook,
        })
      : await runOpenLoop({
          url: request.url,
          rate: request.rate,
          durationMs: request.durationMs,
          warmupMs: request.warmupMs,
          next: nextWebhook,
        });
  return { result, stats: stats.snapshot() };
}

process.on('message', (message: { id: number } & Request) => {
  answer(message).then(
    (result) => process.send!({ id: message.id, result }),
    (error: Error) => process.send!({ id: message.id, error: error.message }),
  );
});
process.on('disconnect', () => process.exit(0));
