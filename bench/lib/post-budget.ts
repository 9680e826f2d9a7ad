// P10, issue 33 item 4: the raw POST budget of this box — POSTs per second from this process to a local merchant in a
// process of its own (./budget-merchant.ts: node:http answering 200), `concurrency` in flight over an undici Agent
// with keep-alive, as the batched sender does (src/outbound/exchange.ts), or with undici.request. bench:budget prints
// it alone; bench:curves measures it in the same run as its bursts, to give them as a share of it.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import type { ProcessStats } from './process-stats.js';

export interface BudgetMerchant {
  port: number;
  /** Its event-loop delay, GC and CPU since the last call (it resets them). */
  stats(): Promise<ProcessStats>;
  stop(): void;
  process: ChildProcess;
}

export async function startBudgetMerchant(): Promise<BudgetMerchant> {
  const child = fork(fileURLToPath(new URL('./budget-merchant.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const ask = <T>(op: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m: T) => resolve(m));
      child.send({ op });
    });
  return {
    port,
    process: child,
    async stats() {
      const snapshot = await ask<ProcessStats>('stats');
      await ask('reset');
      return snapshot;
    },
    stop: () => child.disconnect(),
  };
}

/** POSTs/s answered 200 during `ms`, `concurrency` in flight to http://127.0.0.1:`port`/hook. */
export async function measurePosts(port: number, ms: number, concurrency: number, client: 'fetch' | 'request' = 'fetch') {
  const dispatcher = new Agent({ connections: concurrency });
  const body = JSON.stringify({
    id: 'evt_budget',
    object: 'event',
    type: 'payment.succeeded',
    data: { object: { amount: 1000, currency: 'eur' } },
  });
  const end = performance.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const url = `http://127.0.0.1:${port}/hook`;
        const headers = { 'content-type': 'application/json' };
        if (client === 'request') {
          const res = await request(url, { method: 'POST', body, headers, dispatcher });
          await res.body.arrayBuffer();
          if (res.statusCode === 200) n += 1;
        } else {
          const res = await fetch(url, { method: 'POST', body, headers, dispatcher } as RequestInit);
          await res.arrayBuffer();
          if (res.status === 200) n += 1;
        }
      }
    }),
  );
  await dispatcher.close();
  return n / (ms / 1000);
}
