// Merchant receivers of the soak (R11): one local HTTP server, one path per behaviour. Every POST is counted per
// (path, event id) so the end check can compare what merchants received with the attempts ApiPay recorded.
import { createServer, type Server } from 'node:http';
import type { Random } from './random.js';

export const MERCHANT_PATHS = ['/ok', '/flaky', '/slow', '/garbage'] as const;
export type MerchantPath = (typeof MERCHANT_PATHS)[number];

export interface MerchantPost {
  path: string;
  eventId: string;
  at: number;
  /** Answered 2xx at once with a complete body: the attempt must be recorded as delivered, never made again. */
  answered2xx: boolean;
}

export interface Merchants {
  url: string;
  posts: MerchantPost[];
  close(): Promise<void>;
}

type Answer = (res: import('node:http').ServerResponse) => void;

function garbageAnswers(random: Random): Answer[] {
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
  const answers: Answer[] = [
    (res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes(64)), // binary, NUL bytes likely
    (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0xc3])), // invalid UTF-8
    (res) => res.writeHead(500).end('x'.repeat(200_000)), // huge
    (res) => res.writeHead(204).end(),
    (res) => res.writeHead(302, { location: '/ok' }).end(),
    (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{not json'),
    (res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      res.destroy(); // reset mid-body
    },
  ];
  answers.push((res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\u0000done')); // R3: NUL in a 2xx
  answers.push((res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(Buffer.from([0xf2, 0xbb, 0x8a]))); // R3: not gzip
  return answers;
}

export async function startMerchants(options: { port: number; random: Random; slowMs: number }): Promise<Merchants> {
  const posts: MerchantPost[] = [];
  const { random } = options;
  const garbage = garbageAnswers(random);
  const startedAt = Date.now();
  const down = () => (Date.now() - startedAt) % 40_000 >= 32_000;
  const behaviour: Record<MerchantPath, Answer> = {
    '/ok': (res) => res.writeHead(200).end('ok'),
    // P13/P15: also down for 8 s of every 40 s, long enough to open its circuit (the soak's profile opens it after 2 s).
    '/flaky': (res) => (down() || random() < 0.5 ? res.writeHead(503).end('try later') : res.writeHead(200).end('ok')),
    '/slow': (res) => {
      if (random() < 0.4) setTimeout(() => !res.destroyed && res.writeHead(200).end('late'), options.slowMs);
      else res.writeHead(200).end('ok');
    },
    '/garbage': (res) => garbage[Math.floor(random() * garbage.length)]!(res),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/') as MerchantPath;
      const eventId = /"id":"(evt_[A-Za-z0-9_]+)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1] ?? '?';
      const post: MerchantPost = { path, eventId, at: Date.now(), answered2xx: false };
      if (req.method === 'POST') posts.push(post);
      (behaviour[path] ?? ((r) => r.writeHead(404).end()))(res);
      // Answered in this tick (not the slow path), with the whole body: a 2xx the sender must see.
      post.answered2xx = res.writableEnded && !res.destroyed && res.statusCode >= 200 && res.statusCode < 300;
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${options.port}`,
    posts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
