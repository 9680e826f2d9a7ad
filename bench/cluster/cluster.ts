// Issue 34 (R22): scripts/cluster.sh from the drill: up/down/status/kill/promote of its nodes, with the cluster's
// data folder and offset, so killing a node never touches the shared stack.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../soak/stack.js';

const run = promisify(execFile);

export interface ClusterOptions {
  /** Shifts every port of scripts/cluster/ports.sh. */
  offset: number;
  /** CLUSTER_KAFKA_BROKERS, CLUSTER_HISTORY_HOSTS, … for a smaller cluster. */
  env?: Record<string, string>;
}

export interface Cluster {
  data: string;
  env: Record<string, string>;
  up(...nodes: string[]): Promise<string>;
  /** SIGTERM of the named nodes (a graceful stop, as before the end checks). */
  stop(...nodes: string[]): Promise<void>;
  down(): Promise<void>;
  status(): Promise<{ ok: boolean; report: string }>;
  kill(node: string): Promise<string>;
  promote(): Promise<string>;
  /** The node names scripts/cluster.sh knows, in start order. */
  nodes(): Promise<string[]>;
  /** DATABASE_URL, KAFKA_BROKERS, TEMPORAL_ADDRESS, PG_PRIMARY, … */
  connection(): Promise<Record<string, string>>;
  /** Removes the data of an earlier run (the checks count rows). The cluster must be down. */
  wipe(): Promise<void>;
}

export function cluster(options: ClusterOptions): Cluster {
  const data = join(ROOT, '.data', options.offset === 0 ? 'cluster' : `cluster-${options.offset}`);
  const env = { APIPAY_CLUSTER_DATA: data, CLUSTER_OFFSET: String(options.offset), ...options.env };
  const sh = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run('bash', [join(ROOT, 'scripts/cluster.sh'), ...args], {
        env: { ...process.env, ...env },
        cwd: ROOT,
        maxBuffer: 1 << 22,
      });
      return `${stdout}${stderr}`.trim();
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(
        `scripts/cluster.sh ${args.join(' ')} failed: ${`${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message}`,
        {
          cause: error,
        },
      );
    }
  };
  const self: Cluster = {
    data,
    env,
    up: (...nodes) => sh('up', ...nodes),
    stop: async (...nodes) => void (await sh('stop', ...nodes)),
    down: async () => void (await sh('down').catch(() => '')),
    async status() {
      try {
        return { ok: true, report: await sh('status') };
      } catch (error) {
        return { ok: false, report: (error as Error).message };
      }
    },
    kill: (node) => sh('kill', node),
    promote: () => sh('promote'),
    nodes: async () => (await sh('nodes')).split('\n').filter(Boolean),
    async connection() {
      const lines = (await sh('env')).split('\n');
      return Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    },
    async wipe() {
      const { CLUSTER_PG_DIR: pg } = await self.connection();
      rmSync(data, { recursive: true, force: true });
      if (pg) rmSync(pg, { recursive: true, force: true });
    },
  };
  return self;
}
