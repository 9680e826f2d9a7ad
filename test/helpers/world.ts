// P11: the one test world of an integration file — the test database, the Temporal dev server, Kafka and workers —
// instead of each file's own beforeAll/afterAll. `useWorld()` at the top of a file registers the hooks and returns
// the world; its parts are ready inside tests and later hooks. The connections (and the workers on the default test
// activities) are opened once per test process and kept for the next file that process runs (vitest.config.ts runs
// integration files without isolation), then closed when no file has used them for a moment. What a file asks to
// be its own (workers with other activities, a time-skipping server, topics) is made for it and stopped after it.
// Files in the old style (their own createDatabase/connectDevServer) keep working beside it.
import { randomUUID } from 'node:crypto';
import type { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import type { ActivityDeps } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { createKafkaAdmin, createProducer } from '../../src/kafka/kafkajs.js';
import type { Producer } from '../../src/kafka/types.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { KAFKA_BROKERS, TEST_DATABASE_URL } from './env.js';
import { connectDevServer, createTimeSkippingEnv, startWorkers, testActivities, uniqueTaskQueues } from './temporal.js';

type DevServer = Awaited<ReturnType<typeof connectDevServer>>;
type KafkaAdmin = ReturnType<typeof createKafkaAdmin>;

export interface WorldOptions {
  /** Names this file's task queues and topics (unique per file anyway). */
  label: string;
  /**
   * Workers for this file: `true` the default test activities (shared by the files of one process, on that
   * process's queues), an object: activities with these overrides (e.g. `{ profile }`), on the file's own queues.
   */
  workers?: boolean | Partial<ActivityDeps>;
  /** The Java time-skipping server instead of the dev server, for this file alone (its clock is the file's). */
  timeSkipping?: boolean;
}

export interface World {
  database: Database;
  db: Database['db'];
  sql: Database['sql'];
  /** The dev server (or the file's time-skipping server): a client and the connections workers use. */
  temporal: { client: Client; connection: Connection; native: NativeConnection };
  /** The time-skipping environment (only with `timeSkipping`). */
  env: TestWorkflowEnvironment;
  /** The queues of this file's workers (or, without workers, queues no worker polls). */
  taskQueues: TaskQueues;
  producer: Producer;
  kafka: KafkaAdmin;
  /** A topic of its own (apipay.test.<label>.<random>), created now. */
  topic(label: string, partitions?: number): Promise<string>;
  /** Run `stop` after this file (reverse order, before the world's own teardown; errors ignored). */
  onClose(stop: () => Promise<unknown> | unknown): void;
}

interface Shared {
  /** The pool, and the same pool as files see it: its close() is the world's, not a file's. */
  pool: Database;
  database: Database;
  temporal: DevServer;
  kafka: KafkaAdmin;
  producer?: Promise<Producer>;
  workers?: Promise<{ taskQueues: TaskQueues; stop: () => Promise<void> }>;
}

/** How long the process's connections outlive the last file that used them (the next file usually starts sooner). */
const IDLE_CLOSE_MS = 2_000;
let shared: Promise<Shared> | undefined;
let closing: Promise<void> = Promise.resolve();
let users = 0;
let idleTimer: NodeJS.Timeout | undefined;

async function acquire(): Promise<Shared> {
  users += 1;
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  await closing;
  shared ??= (async () => {
    const pool = createDatabase(TEST_DATABASE_URL, { max: 10 });
    return {
      pool,
      database: { ...pool, close: async () => {} },
      temporal: await connectDevServer(),
      kafka: createKafkaAdmin({ brokers: KAFKA_BROKERS, clientId: `test-world-${process.pid}` }),
    };
  })();
  return shared;
}

function release(): void {
  users -= 1;
  if (users > 0) return;
  idleTimer = setTimeout(() => {
    const closed = shared;
    shared = undefined;
    closing = (async () => {
      if (!closed) return;
      const world = await closed;
      await (await world.workers)?.stop().catch(() => {});
      await (await world.producer)?.close().catch(() => {});
      await world.kafka.close().catch(() => {});
      await world.temporal.close().catch(() => {});
      await world.pool.close().catch(() => {});
    })();
  }, IDLE_CLOSE_MS);
  idleTimer.unref();
}

/** The world of one test file; call once at its top level. */
export function useWorld(options: WorldOptions): World {
  let world: Shared | undefined;
  let env: TestWorkflowEnvironment | undefined;
  let producer: Producer | undefined;
  let taskQueues = uniqueTaskQueues(options.label);
  const closers: (() => Promise<unknown> | unknown)[] = [];
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined)
      throw new Error(`the test world's ${what} is not ready: use it inside a test or a hook after useWorld's`);
    return value;
  };

  beforeAll(async () => {
    world = await acquire();
    const shared = world;
    producer = await (shared.producer ??= createProducer({ brokers: KAFKA_BROKERS, clientId: `test-world-${process.pid}` }));
    if (options.timeSkipping) {
      env = await createTimeSkippingEnv();
      closers.push(() => env!.teardown());
    }
    if (options.workers === true && !options.timeSkipping) {
      shared.workers ??= (async () => {
        const queues = uniqueTaskQueues(`world-${process.pid}`);
        const running = await startWorkers({
          connection: shared.temporal.native,
          taskQueues: queues,
          activities: testActivities(shared.database.db),
        });
        return { taskQueues: queues, stop: running.stop };
      })();
      taskQueues = (await shared.workers).taskQueues;
    } else if (options.workers) {
      const overrides = options.workers === true ? {} : options.workers;
      const connection = env ? env.nativeConnection : shared.temporal.native;
      const running = await startWorkers({ connection, taskQueues, activities: testActivities(shared.database.db, overrides) });
      closers.push(() => running.stop());
    }
  });
  afterAll(async () => {
    for (const stop of closers.reverse())
      await Promise.resolve()
        .then(stop)
        .catch(() => {});
    if (world) release();
  });

  return {
    get database() {
      return ready(world, 'database').database;
    },
    get db() {
      return ready(world, 'database').database.db;
    },
    get sql() {
      return ready(world, 'database').database.sql;
    },
    get temporal() {
      if (env) return { client: env.client, connection: env.connection, native: env.nativeConnection };
      const { client, connection, native } = ready(world, 'Temporal').temporal;
      return { client, connection, native };
    },
    get env() {
      return ready(env, 'time-skipping server');
    },
    get taskQueues() {
      return taskQueues;
    },
    get producer() {
      return ready(producer, 'Kafka producer');
    },
    get kafka() {
      return ready(world, 'Kafka admin').kafka;
    },
    async topic(label: string, partitions = 1) {
      const name = `apipay.test.${label}.${randomUUID().slice(0, 8)}`;
      await ready(world, 'Kafka admin').kafka.createTopic(name, partitions);
      return name;
    },
    onClose(stop) {
      closers.push(stop);
    },
  };
}

/**
 * Holds the process's world for this file without using it (R12 replay files): Temporal's native runtime shuts down
 * when its last connection closes, and a replay that took the runtime before that fails. Holding the world keeps
 * its connection, so the runtime, open until the file ends.
 */
export function holdRuntime(): void {
  beforeAll(async () => {
    await acquire();
  });
  afterAll(() => release());
}
