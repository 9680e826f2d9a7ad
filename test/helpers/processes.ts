// Child processes of the tests (the API, the relay, the dispatcher run as real processes): stopping one and waiting
// for it to exit, so no process outlives its test file.
import type { ChildProcess } from 'node:child_process';

/** Sends `signal` to a child still running and waits for its exit; one already gone (or never started) is fine. */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
