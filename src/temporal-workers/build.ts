// Builds the Temporal workers of this service (one per task queue) for the worker process and for tests; a release
// build's worker loads the workflow bundle `npm run build` wrote (dist/workflow-bundle.js) instead of bundling at start.
// R18: every bundle carries the OpenTelemetry workflow interceptor, every worker its sink and activity interceptors.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel, type WorkerOptions } from '@temporalio/worker';
import { safeError } from '../db/errors.js';
import type { Logger } from '../lib/logger.js';
import { activeTracing } from '../tracing/sdk.js';
import { tracingActivityInterceptors, tracingSinks, WORKFLOW_TRACING_MODULE } from '../tracing/temporal.js';
import { probeQueue, slowLaneQueue, type TaskQueues } from '../shared/task-queues.js';
import type { Activities } from '../activities/index.js';

/** The workflows' entry module: the TypeScript source under tsx, the compiled module when run from dist/. */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index.${import.meta.url.endsWith('.js') ? 'js' : 'ts'}`, import.meta.url));
/** The bundle `npm run build` writes (dist/workflow-bundle.js, scripts/build-workflow-bundle.ts); never under src/. */
export const PREBUILT_BUNDLE_PATH = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/** The prebuilt workflow bundle when the process runs from a build that has one, else undefined (bundle at start). */
export function prebuiltWorkflowBundle(path = PREBUILT_BUNDLE_PATH): { codePath: string } | undefined {
  return existsSync(path) ? { codePath: path } : undefined;
}

const quietBundlerLogger = {
  trace: () => {}, debug: () => {}, info: () => {},
  warn: (m: string, meta?: object) => console.warn(m, meta ?? ''),
  error: (m: string, meta?: object) => console.error(m, meta ?? ''),
  log: () => {},
};

/** Bundles src/workflows the way a worker does at start (tests, `npm start`, and the build's prebuilt bundle). */
export async function bundleWorkflows(workflowsPath = WORKFLOWS_PATH): Promise<string> {
  return (await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: [WORKFLOW_TRACING_MODULE], logger: quietBundlerLogger })).code;
}

/**
 * Routes the Temporal SDK's own log lines (worker state changes, core warnings) into the process's JSON log, at
 * WARN and above: one log format per process, without the SDK's per-state INFO chatter. Call before connecting.
 */
export function installWorkerRuntime(logger: Logger): void {
  Runtime.install({
    logger: new DefaultLogger('WARN', ({ level, message, meta }) => {
      if (isExpectedWorkerNotice(message, meta)) return;
      (level === 'ERROR' ? logger.error.bind(logger) : logger.warn.bind(logger))({ temporal: meta }, message);
    }),
  });
}

/**
 * C11: the SDK's warnings that describe this service's design rather than a problem: the M2 slow lane runs activities
 * only, so "No workflows registered" on its task queue is how it is meant to be, not something to act on.
 */
export function isExpectedWorkerNotice(message: string, meta: Record<string, unknown> | undefined): boolean {
  const taskQueue = typeof meta?.taskQueue === 'string' ? meta.taskQueue : '';
  return message.startsWith('No workflows registered') && taskQueue.endsWith(slowLaneQueue(''));
}

/** The SDK's console logger (tests, benches) without the notices above: what the SDK prints, as it prints it. */
export function consoleWorkerLogger(level: LogLevel): DefaultLogger {
  return new DefaultLogger(level, ({ level: at, message, meta, timestampNanos }) => {
    if (isExpectedWorkerNotice(message, meta)) return;
    const when = new Date(Number(timestampNanos / 1_000_000n)).toISOString();
    process.stderr.write(`${when} [${at}] ${message}${meta === undefined ? '' : ` ${inspect(meta)}`}\n`);
  });
}

export interface WorkerSetup {
  connection: NativeConnection;
  namespace?: string;
  taskQueues: TaskQueues;
  activities: Activities;
  /** A prebuilt bundle (tests bundle once); else dist/workflow-bundle.js when present; else bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  tuning?: Partial<WorkerOptions>;
  /** P3: merged over `tuning` for the reconciliation queue's worker (reconciliationTuning). */
  reconciliationTuning?: Partial<WorkerOptions>;
  /** M2: activity slots of the delivery queue's slow lane (default 10, WORKER_SLOW_LANE_ACTIVITIES). */
  slowLaneActivities?: number;
}

/** The worker settings read from the environment (src/config/env.ts); the production worker and the bench use these. */
export interface WorkerTuningEnv {
  WORKER_MAX_CACHED_WORKFLOWS: number;
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: number;
  WORKER_MAX_CONCURRENT_ACTIVITIES: number;
}

export interface ReconciliationTuningEnv {
  WORKER_MAX_CACHED_WORKFLOWS: number;
  WORKER_RECONCILIATION_WORKFLOW_TASKS: number;
  WORKER_RECONCILIATION_ACTIVITIES: number;
}

/**
 * The shipped worker tuning. Parked deliveries live in the server's timers, not here: a bounded sticky cache bounds
 * the worker's memory (an evicted workflow replays its short history when its timer fires), and bounded task and
 * activity slots bound the burst of first attempts, whose high-water mark is what the process keeps resident.
 * docs/benchmarks.md ("Parked deliveries and worker memory") has the figures.
 */
export function workerTuning(env: WorkerTuningEnv): Partial<WorkerOptions> {
  return {
    maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS,
    maxConcurrentWorkflowTaskExecutions: Math.max(2, Math.min(env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS, env.WORKER_MAX_CACHED_WORKFLOWS || Infinity)),
    maxConcurrentActivityTaskExecutions: env.WORKER_MAX_CONCURRENT_ACTIVITIES,
    maxConcurrentLocalActivityExecutions: env.WORKER_MAX_CONCURRENT_ACTIVITIES,
  };
}

/**
 * P3: the reconciliation worker's slots. A reconciliation is one workflow task whose steps are local activities, so
 * it holds its workflow-task slot while the provider query and the ledger posting run: with the deliveries' 10 slots
 * a drain reached 56 % of the bare workflow rate, with 40 it reached 80 % (docs/benchmarks.md, "Inbound drain").
 * Reconciliations do not park in timers by the thousand, so these slots do not bear on the parked-delivery memory.
 */
export function reconciliationTuning(env: ReconciliationTuningEnv): Partial<WorkerOptions> {
  return {
    maxConcurrentWorkflowTaskExecutions: Math.max(2, Math.min(env.WORKER_RECONCILIATION_WORKFLOW_TASKS, env.WORKER_MAX_CACHED_WORKFLOWS || Infinity)),
    maxConcurrentActivityTaskExecutions: env.WORKER_RECONCILIATION_ACTIVITIES,
    maxConcurrentLocalActivityExecutions: env.WORKER_RECONCILIATION_ACTIVITIES,
  };
}

/**
 * R1: an activity that fails on a database error fails with its DatabaseError stand-in (SQLSTATE, table, short
 * message), so neither the workflow history, the Temporal UI nor the worker's log line holds the query parameters.
 */
const safeDbErrors = {
  inbound: {
    async execute(input: { args: unknown[] }, next: (input: never) => Promise<unknown>) {
      try {
        return await next(input as never);
      } catch (error) {
        throw safeError(error);
      }
    },
  },
};

/** P18: the probe queue's workflow-task and activity slots (a release step holds one for up to a tick). */
const PROBE_SLOTS = 10;

export async function createWorkers(setup: WorkerSetup): Promise<Worker[]> {
  const tracing = activeTracing();
  const interceptors = { activity: [...tracingActivityInterceptors(tracing), () => safeDbErrors] };
  const queues = [...new Set(Object.values(setup.taskQueues))];
  // Bundle once and share it: each task queue's worker would otherwise build its own copy.
  const workflowBundle = setup.workflowBundle ?? prebuiltWorkflowBundle() ?? { code: await bundleWorkflows() };
  // What every worker of this process shares; a workflow worker adds the bundle and the tracing sink.
  const common = { connection: setup.connection, namespace: setup.namespace ?? 'default', activities: setup.activities, interceptors };
  const withWorkflows = { ...common, workflowBundle, sinks: tracingSinks(tracing) };
  // M2: the slow lane runs attempts only (no workflows), in slots of its own, so a hanging endpoint never takes the
  // normal lane's. Every process that runs the delivery queue also polls its slow lane.
  const slowLane = Worker.create({
    ...common,
    taskQueue: slowLaneQueue(setup.taskQueues.delivery),
    maxConcurrentActivityTaskExecutions: setup.slowLaneActivities ?? 10,
  });
  // P18: endpoint probes (one workflow per down endpoint) on a queue and in slots of their own, so a probe's next step
  // — the release the returning merchant waits for — never queues behind a retry fire's workflow tasks.
  const probes = Worker.create({
    ...withWorkflows,
    taskQueue: probeQueue(setup.taskQueues.delivery),
    maxCachedWorkflows: 100, // probes wake every few seconds at most; past 100 down endpoints they replay a short history
    maxConcurrentWorkflowTaskExecutions: PROBE_SLOTS,
    maxConcurrentActivityTaskExecutions: PROBE_SLOTS,
  });
  return Promise.all([
    slowLane,
    probes,
    ...queues.map((taskQueue) =>
      Worker.create({
        ...withWorkflows,
        taskQueue,
        ...setup.tuning,
        ...(taskQueue === setup.taskQueues.reconciliation && taskQueue !== setup.taskQueues.delivery ? setup.reconciliationTuning : {}),
      }),
    ),
  ]);
}

/** Runs all workers until one fails or all are shut down (Worker.shutdown on SIGTERM). */
export async function runWorkers(workers: Worker[]): Promise<void> {
  await Promise.all(workers.map((w) => w.run()));
}
