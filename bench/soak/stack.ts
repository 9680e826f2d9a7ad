// The soak's own stack (R11): PostgreSQL, Temporal and Kafka on their own ports and data folders, started,
// restarted and stopped by scripts/stack.sh, so killing them never touches the shared stack other tests use.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, '../..');

export interface SoakPorts {
  pg: number;
  temporal: number;
  temporalUi: number;
  kafka: number;
  kafkaController: number;
  api: number;
  workerMetrics: number;
  dispatcherMetrics: number;
  sandbox: number;
  merchants: number;
}

export function soakPorts(base: number): SoakPorts {
  return {
    pg: base + 1, temporal: base + 2, temporalUi: base + 3, kafka: base + 4, kafkaController: base + 5,
    api: base + 6, workerMetrics: base + 7, dispatcherMetrics: base + 8, sandbox: base + 9, merchants: base + 10,
  };
}

export interface SoakStack {
  data: string;
  ports: SoakPorts;
  env: Record<string, string>;
  databaseUrl: string;
  up(): Promise<void>;
  down(): Promise<void>;
  /**
   * R16: `scripts/stack.sh status`: every service answers its health check (pg_isready, Temporal's cluster health,
   * Kafka's metadata), not merely a live pid. `report` is the status lines.
   */
  health(): Promise<{ ok: boolean; report: string }>;
  /** kill -9 of a service and (PostgreSQL) every backend it forked: a crash, not a shutdown. */
  kill(service: 'kafka' | 'postgresql' | 'temporal'): Promise<void>;
}

export function soakStack(ports: SoakPorts): SoakStack {
  const data = process.env.SOAK_DATA ?? join(ROOT, '.data', `soak-${ports.pg - 1}`); // one folder per port base
  // As root PostgreSQL's data must sit where the postgres user can reach it (see scripts/stack.sh).
  const root = process.getuid?.() === 0;
  const pgData = root ? `/var/lib/apipay/soak-${createHash('sha1').update(ROOT).digest('hex').slice(0, 10)}-${ports.pg}/pg` : join(data, 'pg-data');
  const env: Record<string, string> = {
    APIPAY_DATA: data,
    APIPAY_PG_DATA: pgData,
    PGPORT: String(ports.pg),
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.temporalUi),
    KAFKA_PORT: String(ports.kafka),
    KAFKA_CONTROLLER_PORT: String(ports.kafkaController),
    APIPAY_IDP: '0', // the soak needs no identity provider, and the main stack's Keycloak holds its port
    APIPAY_STRIPE_MOCK: '0', // nor stripe-mock or RabbitMQ (their fixed ports belong to the main stack's)
    APIPAY_RABBITMQ: '0',
  };
  const stack = (command: string) =>
    run('bash', [join(ROOT, 'scripts/stack.sh'), command], { env: { ...process.env, ...env }, cwd: ROOT, maxBuffer: 1 << 22 });
  const pidOf = (service: string) => {
    const file = service === 'postgresql' ? join(pgData, 'postmaster.pid') : join(data, 'pids', `${service}.pid`);
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
  };
  return {
    data,
    ports,
    env,
    databaseUrl: `postgres://postgres@127.0.0.1:${ports.pg}/apipay`,
    async up() {
      try {
        await stack('up');
      } catch (error) {
        const e = error as { stdout?: string; stderr?: string };
        throw new Error(`soak stack: scripts/stack.sh up failed\n${e.stdout ?? ''}${e.stderr ?? ''}`);
      }
    },
    async down() {
      await stack('down').catch(() => undefined);
    },
    async health() {
      try {
        const { stdout } = await stack('status');
        return { ok: true, report: stdout.trim() };
      } catch (error) {
        const e = error as { stdout?: string; stderr?: string; message: string };
        return { ok: false, report: `${e.stdout ?? ''}${e.stderr ?? ''}`.trim() || e.message };
      }
    },
    async kill(service) {
      const pid = pidOf(service);
      if (!pid) throw new Error(`soak stack: no pid for ${service}`);
      const victims = [pid];
      if (service === 'postgresql') {
        const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
        victims.push(...stdout.split('\n').map((s) => Number(s.trim())).filter((n) => n > 0));
      }
      for (const victim of victims) {
        try {
          process.kill(victim, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
  };
}

/** A fresh run: no data of an earlier soak (the invariants count every row in the soak database). */
export function wipeSoakData(stack: SoakStack) {
  rmSync(stack.data, { recursive: true, force: true });
  rmSync(stack.env.APIPAY_PG_DATA!, { recursive: true, force: true });
  mkdirSync(join(stack.data, 'logs'), { recursive: true });
}
