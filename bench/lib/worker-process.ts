// P8, P12, P13: the shipped delivery worker (./delivery-worker.ts: createWorkers + workerTuning from WORKER_*) started
// in a process of its own for a benchmark, as production deploys it: the workflow bundle built here first (so webpack
// stays out of the worker's memory), the bench's parsed profile passed through, optionally at a lower CPU priority
// (nice). Resolves once the worker printed "ready". One helper for bench:outbound, bench:outage, bench:sleeping and
// bench:curves.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type { Profile } from '../../src/config/profile.js';
import { WORKFLOWS_PATH } from '../../src/temporal-workers/build.js';

export interface WorkerProcessOptions {
  /** The run's id: names the bundle file. */
  run: string;
  taskQueue: string;
  secretsKey: Buffer;
  /** The bench's profile (retry schedule, circuit…); without it the worker loads APIPAY_PROFILE. */
  profile?: Profile;
  /** `nice -n` of the process; 0 or absent: the same priority as the bench. */
  nice?: number;
  /** More environment for the worker (e.g. WORKER_MAX_CACHED_WORKFLOWS). */
  env?: Record<string, string>;
}

export async function startWorkerProcess(options: WorkerProcessOptions): Promise<ChildProcess> {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  const bundlePath = join(tmpdir(), `apipay-bench-bundle-${options.run}.js`);
  writeFileSync(bundlePath, code);
  const node = [
    process.execPath,
    // Diagnostics (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`): Node flags for the worker process only.
    ...(process.env.BENCH_WORKER_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
    '--import',
    'tsx',
    fileURLToPath(new URL('./delivery-worker.ts', import.meta.url)),
    options.taskQueue,
  ];
  // BENCH_WORKER_CPUS (e.g. `1`): the worker on those CPUs only (`taskset -c`), for a run that keeps the Temporal side
  // of the box apart from the dispatcher's (docs/benchmarks.md, "Temporal on a core of its own").
  const pinned = process.env.BENCH_WORKER_CPUS ? ['taskset', '-c', process.env.BENCH_WORKER_CPUS, ...node] : node;
  const [command, ...argv] = options.nice ? ['nice', '-n', String(options.nice), ...pinned] : pinned;
  const child = spawn(command!, argv, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: {
      ...process.env,
      BENCH_SECRETS_KEY: options.secretsKey.toString('base64'),
      BENCH_WORKFLOW_BUNDLE: bundlePath,
      ...(options.profile ? { BENCH_PROFILE_JSON: JSON.stringify(options.profile) } : {}),
      ...options.env,
    },
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`delivery worker exited with ${code}`)));
  });
  return child;
}
