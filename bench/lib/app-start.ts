// One app process (api, worker or dispatcher) started from a given command until its /readyz answers 200: how long
// that took and the process's resident memory then. Shared by bench/startup.ts (tsx against dist, docs/benchmarks.md)
// and test/integration/image-tree.test.ts (the processes of the image's file tree).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';

export type AppName = 'api' | 'worker' | 'dispatcher';
export const APPS: AppName[] = ['api', 'worker', 'dispatcher'];

/** The variable naming each process's listener that serves /healthz and /readyz. */
export const READY_PORT_VARIABLE: Record<AppName, string> = {
  api: 'API_PORT',
  worker: 'WORKER_METRICS_PORT',
  dispatcher: 'DISPATCHER_METRICS_PORT',
};

export interface StartedApp {
  child: ChildProcess;
  /** From spawn to the first 200 of /readyz. */
  readyMs: number;
  /** VmRSS of the process when it was first ready, in MiB. */
  rssMiB: number;
  output: () => string;
  stop: () => Promise<number | null>;
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
  return Math.round((kib / 1024) * 10) / 10;
}

/**
 * Spawns `command args` in `cwd` with exactly `env` and polls http://127.0.0.1:`port`/readyz every 100 ms; rejects
 * with the process's output when it exits first or is not ready within `timeoutMs`.
 */
export async function startApp(options: {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  port: number;
  timeoutMs?: number;
}): Promise<StartedApp> {
  const started = performance.now();
  const child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited: number | null | undefined;
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve((exited = code))));
  const stop = async () => {
    if (exited === undefined) child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exit;
    clearTimeout(force);
    return code;
  };
  const deadline = started + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (exited !== undefined) throw new Error(`${options.args.join(' ')} exited with ${exited} before it was ready:\n${output}`);
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${options.args.join(' ')} was not ready in time:\n${output}`);
    }
    const ok = await fetch(`http://127.0.0.1:${options.port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) {
      const readyMs = Math.round(performance.now() - started);
      return { child, readyMs, rssMiB: rssMiB(child.pid!), output: () => output, stop };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Registers `namespace` on the Temporal frontend at `address` unless it exists, and waits until it answers. */
export async function ensureNamespace(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    try {
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    } catch (error) {
      if ((error as { code?: number }).code !== 6) throw error; // 6 = ALREADY_EXISTS
    }
    for (let i = 0; ; i++) {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } catch (error) {
        if (i > 50) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await connection.close();
  }
}
