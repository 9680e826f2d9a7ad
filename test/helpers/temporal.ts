// Temporal for tests: workers on the real dev server with a unique task queue, and the Java time-skipping server.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { createWorkers, runWorkers } from '../../src/temporal-workers/build.js';
import { createActivities, type ActivityDeps } from '../../src/activities/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { freePort } from './capture.js';
import { SA } from '../../src/shared/search-attributes.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { TEMPORAL_ADDRESS, TEST_SECRETS_KEY, TEST_SERVER_PATH, WORKFLOW_BUNDLE_PATH } from './env.js';
import { testProfile } from './profile.js';
import type { Db } from '../../src/db/client.js';

export const testLogger = createLogger('test', process.env.TEST_LOG_LEVEL ?? 'warn');

/** Task queues no other test file shares, so a worker only ever sees its own test's workflows. */
export function uniqueTaskQueues(label: string): TaskQueues {
  const suffix = `${label}-${randomUUID().slice(0, 8)}`;
  return { delivery: `test-delivery-${suffix}`, reconciliation: `test-reconcile-${suffix}`, smoke: `test-smoke-${suffix}` };
}

export function testActivities(db: Db, overrides: Partial<ActivityDeps> = {}) {
  return createActivities({ db, profile: testProfile(), logger: testLogger, secretsKey: TEST_SECRETS_KEY, ...overrides });
}

/** Starts the production worker setup (src/temporal-workers/build.ts) on `connection` with the prebuilt bundle. */
export async function startWorkers(options: {
  connection: NativeConnection;
  taskQueues: TaskQueues;
  activities: ReturnType<typeof createActivities>;
  namespace?: string;
}): Promise<{ stop: () => Promise<void> }> {
  const workers = await createWorkers({ ...options, workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } });
  const running = runWorkers(workers);
  return {
    async stop() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running;
    },
  };
}

/** The real dev server of scripts/stack.sh. */
export async function connectDevServer(): Promise<{ client: Client; connection: Connection; native: NativeConnection; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: TEMPORAL_ADDRESS });
  const native = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
  return {
    client: new Client({ connection }),
    connection,
    native,
    close: async () => {
      await connection.close();
      await native.close();
    },
  };
}

/** A client of the dev server that connects on first use: for app tests whose routes never reach Temporal. */
/** Ends the workflows a test started (those already closed or never started are fine), so none outlives its file. */
export async function terminateWorkflows(client: Client | undefined, ids: Iterable<string>, reason = 'test cleanup'): Promise<void> {
  if (!client) return;
  for (const id of ids)
    await client.workflow
      .getHandle(id)
      .terminate(reason)
      .catch(() => undefined);
}

export const lazyTemporal = () => new Client({ connection: Connection.lazy({ address: TEMPORAL_ADDRESS }) });

/** A4: a handle on `workflowId` from a client that says who it is, as the Temporal UI or CLI of that person would. */
export const handleAs = (connection: Connection, identity: string, workflowId: string) =>
  new Client({ connection, identity }).workflow.getHandle(workflowId);

/**
 * The Java test server with time skipping, with our search attributes registered. The SDK's own start gives the JVM
 * 5 s to answer (fixed in its native core) and failed whole files on a loaded machine (P11), so this starts the
 * server itself on a free port, waits up to a minute for it, and connects the SDK's environment to it; teardown
 * stops it.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const port = await freePort();
  const server = spawn(TEST_SERVER_PATH, [String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const orphan = () => server.kill('SIGKILL'); // the test process ends without a teardown: do not leave the JVM
  process.once('exit', orphan);
  void exited.then(() => process.off('exit', orphan));
  let env: TestWorkflowEnvironment;
  try {
    await untilListening(port, server, 60_000);
    // The SDK's own constructor of an environment on a running server (its public ones assume no time skipping).
    const create = (TestWorkflowEnvironment as unknown as { create(options: object): Promise<TestWorkflowEnvironment> }).create;
    env = await create.call(TestWorkflowEnvironment, {
      server: { type: 'existing' },
      address: `127.0.0.1:${port}`,
      namespace: 'default',
      supportsTimeSkipping: true,
    });
  } catch (error) {
    server.kill('SIGKILL');
    throw error;
  }
  const teardown = env.teardown.bind(env);
  env.teardown = async () => {
    await teardown();
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
    await exited;
  };
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(Object.values(SA).map((key) => [key.name, 2])), // 2 = KEYWORD
  });
  return env;
}

async function untilListening(port: number, server: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`the time-skipping server exited (${server.exitCode ?? server.signalCode})`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`the time-skipping server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
