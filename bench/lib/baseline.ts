// The performance baseline every flow benchmark is compared to: N one-activity workflows on the dev server,
// started with bounded concurrency, timed from the first start to the last completion.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pLimit from 'p-limit';
import { consoleWorkerLogger } from '../../src/temporal-workers/build.js';

export interface BaselineOptions {
  count?: number;
  concurrency?: number;
  address?: string;
}

export interface BaselineResult {
  count: number;
  concurrency: number;
  seconds: number;
  workflowsPerSecond: number;
}

let runtimeInstalled = false;
export function quietTemporalRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: consoleWorkerLogger('WARN') });
  } catch {
    // already installed by the caller
  }
}

export async function measureBaselineRate(options: BaselineOptions = {}): Promise<BaselineResult> {
  const count = options.count ?? 500;
  const concurrency = options.concurrency ?? 32;
  const address = options.address ?? process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  quietTemporalRuntime();
  const taskQueue = `bench-baseline-${randomUUID().slice(0, 8)}`;
  const native = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./baseline-workflow.ts', import.meta.url)),
    logger: new DefaultLogger('WARN'),
  });
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowBundle,
    activities: { noop: async (n: number) => n },
  });
  const running = worker.run();
  try {
    // Warm-up: the first workflow pays for worker start and caches.
    await client.workflow.execute('baselineWorkflow', { taskQueue, workflowId: `${taskQueue}-warmup`, args: [0] });
    const started = performance.now();
    await pLimit(concurrency).map(
      Array.from({ length: count }, (_, i) => i),
      async (i) => {
        await client.workflow.execute('baselineWorkflow', { taskQueue, workflowId: `${taskQueue}-${i}`, args: [i] });
      },
    );
    const seconds = (performance.now() - started) / 1000;
    return { count, concurrency, seconds, workflowsPerSecond: count / seconds };
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await native.close();
  }
}
