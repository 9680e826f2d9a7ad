// The soak's own stack (R11): PostgreSQL, Temporal, Kafka and (M11, when installed) RabbitMQ on their own ports, node
// name and data folders, started, restarted and stopped by scripts/stack.sh, so killing them never touches the
// shared stack other tests use.
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
  /** M11: the broker's AMQP port and its Erlang distribution port. */
  rabbitmq: number;
  rabbitmqDist: number;
}

export function soakPorts(base: number): SoakPorts {
  return {
    pg: base + 1, temporal: base + 2, temporalUi: base + 3, kafka: base + 4, kafkaController: base + 5,
    api: base + 6, workerMetrics: base + 7, dispatcherMetrics: base + 8, sandbox: base + 9, merchants: base + 10,
    rabbitmq: base + 11, rabbitmqDist: base + 12,
  };
}

/** M11: Debian's rabbitmq-server, as scripts/stack/rabbitmq.sh runs it; without it the soak has no broker endpoint. */
export const rabbitmqInstalled = () => existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server');

export interface SoakStack {
  data: string;
  /** M11: the stack was asked for a RabbitMQ broker of its own (ports.rabbitmq; running once up, if installed). */
  broker: boolean;
  ports: SoakPorts;
  env: Record<string, string>;
  databaseUrl: string;
  /** `scripts/stack.sh up`, or `up rabbitmq` (M11: the broker alone, as its own recipe restarts it). */
  up(service?: 'rabbitmq'): Promise<void>;
  down(): Promise<void>;
  /**
   * R16: `scripts/stack.sh status`: every service answers its health check (pg_isready, Temporal's cluster health,
   * Kafka's metadata), not merely a live pid. `report` is the status lines.
   */
  health(): Promise<{ ok: boolean; report: string }>;
  /** kill -9 of a service and (PostgreSQL) every backend it forked: a crash, not a shutdown. */
  kill(service: 'kafka' | 'postgresql' | 'temporal' | 'rabbitmq'): Promise<void>;
}

/** `broker`: run the soak's own RabbitMQ too (installed by the stack script when missing); the replicas drill runs none. */
export function soakStack(ports: SoakPorts, options: { broker?: boolean } = {}): SoakStack {
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
    APIPAY_STRIPE_MOCK: '0', // nor stripe-mock (its fixed port belongs to the main stack's)
    // M11: a broker node of its own, beside the main stack's (apipay@localhost on 5672/25672).
    APIPAY_RABBITMQ: options.broker ? '1' : '0',
    RABBITMQ_PORT: String(ports.rabbitmq),
    RABBITMQ_DIST_PORT: String(ports.rabbitmqDist),
    RABBITMQ_NODENAME: `apipay-soak-${ports.pg - 1}@localhost`,
  };
  const stack = (command: string, service?: string) =>
    run('bash', [join(ROOT, 'scripts/stack.sh'), command, ...(service ? [service] : [])], { env: { ...process.env, ...env }, cwd: ROOT, maxBuffer: 1 << 22 });
  const pidOf = (service: string) => {
    const file = service === 'postgresql' ? join(pgData, 'postmaster.pid') : join(data, 'pids', `${service}.pid`);
    return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : undefined;
  };
  return {
    data,
    broker: options.broker ?? false,
    ports,
    env,
    databaseUrl: `postgres://postgres@127.0.0.1:${ports.pg}/apipay`,
    async up(service) {
      try {
        await stack('up', service);
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
      if (service === 'rabbitmq') {
        // rabbitmq-server is a shell script whose Erlang VM is its child, in its process group (setsid made it the
        // leader): kill -9 of the group takes the node down at once, as a crash. A pid file of an older stack script
        // (a subshell's pid, no group of its own): kill -9 of every process below it instead.
        try {
          return void process.kill(-pid, 'SIGKILL');
        } catch {
          // not a group leader
        }
        const tree = [pid];
        for (let i = 0; i < tree.length; i += 1) {
          const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(tree[i])]).catch(() => ({ stdout: '' }));
          tree.push(...stdout.split('\n').map((x) => Number(x.trim())).filter((n) => n > 0));
        }
        for (const victim of tree) {
          try {
            process.kill(victim, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        return;
      }
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
