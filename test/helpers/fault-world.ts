// R13: what the step-fault tests share: the profile pointing the provider at the test's sandbox, and a worker
// process killed at a step.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Profile } from '../../src/config/profile.js';
import type { TaskQueues } from '../../src/shared/task-queues.js';
import { testProfile } from './profile.js';

export function faultProfile(providerBaseUrl: string): Profile {
  return testProfile({ inbound: { providers: { 'sandbox-stripe': { api_base_url: providerBaseUrl } } } });
}

export interface FaultWorker {
  /** Resolves with the signal that ended the process (SIGKILL when the fault fired). */
  exited: Promise<NodeJS.Signals | null>;
  output: () => string;
  kill(): void;
}

/** A worker process on `taskQueues` that kills itself at `fault`; resolves once it polls. */
export async function startFaultWorker(options: {
  taskQueues: TaskQueues;
  providerBaseUrl: string;
  fault: string;
}): Promise<FaultWorker> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./fault-worker.ts', import.meta.url).pathname, JSON.stringify(options)],
    {
      env: { ...process.env, NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = once(child, 'exit').then(([, signal]) => signal as NodeJS.Signals | null);
  const deadline = Date.now() + 60_000;
  while (!text.includes('ready')) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`fault worker exited before ready:\n${text}`);
    if (Date.now() > deadline) throw new Error(`fault worker not ready after 60 s:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { exited, output: () => text, kill: () => child.kill('SIGKILL') };
}
