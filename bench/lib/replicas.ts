// P6: two (or more) of each app process (src/workers/*.ts via tsx) on their own ports, killed with SIGKILL on
// demand and not respawned (the survivors carry the load), and a round-robin HTTP balancer in front of the APIs.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import type { AppName } from '../soak/apps.js';
import { ROOT } from '../soak/stack.js';

export interface Replica {
  app: AppName;
  index: number;
  /** The port of its HTTP listener (API) or of its metrics listener (worker, dispatcher). */
  port: number;
}

export interface ReplicaSet {
  replicas: Replica[];
  kill(app: AppName, index: number): void;
  /** Replicas that exited although nobody killed them. */
  unplannedExits(): string[];
  stop(): Promise<void>;
}

const PORT_VARIABLE: Record<AppName, string> = {
  api: 'API_PORT',
  worker: 'WORKER_METRICS_PORT',
  dispatcher: 'DISPATCHER_METRICS_PORT',
};

export function startReplicas(options: { env: Record<string, string>; logs: string; replicas: Replica[] }): ReplicaSet {
  const children = new Map<string, ChildProcess>();
  const planned = new Set<string>();
  const unplanned: string[] = [];
  let stopping = false;
  const key = (app: AppName, index: number) => `${app}#${index}`;
  for (const replica of options.replicas) {
    const name = key(replica.app, replica.index);
    const log = openSync(join(options.logs, `${name.replace('#', '-')}.log`), 'a');
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, `src/workers/${replica.app}.ts`)], {
      cwd: ROOT,
      env: { ...process.env, ...options.env, [PORT_VARIABLE[replica.app]]: String(replica.port) },
      stdio: ['ignore', log, log],
      detached: true, // its own process group: SIGKILL reaches every process it started
    });
    child.once('exit', (code, signal) => {
      if (!stopping && !planned.has(name)) unplanned.push(`${name} exited (code ${code}, signal ${signal})`);
    });
    children.set(name, child);
  }
  const signal = (child: ChildProcess, sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // already gone
    }
  };
  return {
    replicas: options.replicas,
    kill(app, index) {
      const child = children.get(key(app, index));
      if (!child) return;
      planned.add(key(app, index));
      signal(child, 'SIGKILL');
    },
    unplannedExits: () => [...unplanned],
    async stop() {
      stopping = true;
      await Promise.all(
        [...children.values()].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              const force = setTimeout(() => signal(child, 'SIGKILL'), 15_000);
              child.once('exit', () => (clearTimeout(force), resolve()));
              signal(child, 'SIGTERM');
            }),
        ),
      );
    },
  };
}

/**
 * The load balancer of the drill: each request goes to the next API in turn; a connection refused (a killed
 * replica) is tried on the next one, so only requests in flight at the kill fail (502), and the provider resends.
 */
export async function startRoundRobin(port: number, upstreams: number[]): Promise<Server & { forwarded: Map<number, number> }> {
  let next = 0;
  const forwarded = new Map<number, number>(upstreams.map((u) => [u, 0]));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        const upstream = upstreams[next++ % upstreams.length]!;
        const out = request(
          { host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            forwarded.set(upstream, forwarded.get(upstream)! + 1);
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'ECONNREFUSED' && tries < upstreams.length) return attempt(tries + 1);
          if (!res.headersSent) res.writeHead(502).end('upstream failed');
          else res.destroy();
        });
        out.end(body);
      };
      attempt(1);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return Object.assign(server, { forwarded });
}
