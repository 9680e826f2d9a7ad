// A worker with stubbed activities on the time-skipping server: a workflow's branches tested in seconds, without
// the database or an HTTP peer. The stubs record their calls; the workflow code is the prebuilt test bundle.
// `useStubServer()` is a file's time-skipping server with its stub workers, all stopped after the file.
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import { createTimeSkippingEnv } from './temporal.js';
import { WORKFLOW_BUNDLE_PATH } from './env.js';
import { tracingSinks } from '../../src/tracing/temporal.js';

type Stub = (...args: never[]) => Promise<unknown>;

export interface StubWorker {
  taskQueue: string;
  /** Every activity call, in order: its name and its first argument. */
  calls: { name: string; input: unknown }[];
  /** The first arguments of every call of one activity, in order. */
  callsOf(name: string): unknown[];
  stop(): Promise<void>;
}

export async function startStubWorker(
  env: TestWorkflowEnvironment,
  label: string,
  stubs: Record<string, Stub>,
): Promise<StubWorker> {
  const taskQueue = `test-stub-${label}-${randomUUID().slice(0, 8)}`;
  const calls: StubWorker['calls'] = [];
  const activities = Object.fromEntries(
    Object.entries(stubs).map(([name, fn]) => [
      name,
      async (...args: never[]) => {
        calls.push({ name, input: args[0] });
        return fn(...args);
      },
    ]),
  );
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH },
    activities,
    sinks: tracingSinks(), // R18: the bundle's OpenTelemetry workflow interceptor exports through it (dropped here)
  });
  const running = worker.run();
  return {
    taskQueue,
    calls,
    callsOf: (name) => calls.filter((c) => c.name === name).map((c) => c.input),
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

/** Registers the hooks of a file's own time-skipping server; `env` is ready inside tests, `start` adds a stub worker. */
export function useStubServer(): {
  readonly env: TestWorkflowEnvironment;
  start(label: string, stubs: Record<string, Stub>): Promise<StubWorker>;
} {
  let env: TestWorkflowEnvironment | undefined;
  const workers: StubWorker[] = [];
  beforeAll(async () => {
    env = await createTimeSkippingEnv();
  });
  afterAll(async () => {
    for (const worker of workers) await worker.stop();
    await env?.teardown();
  });
  const ready = () => {
    if (!env) throw new Error('the time-skipping server is not ready: use it inside a test or a later hook');
    return env;
  };
  return {
    get env() {
      return ready();
    },
    async start(label, stubs) {
      const worker = await startStubWorker(ready(), label, stubs);
      workers.push(worker);
      return worker;
    },
  };
}
