// Clear start-up failures (R9): a bad variable, a port in use or an unreachable dependency stops the process with
// ONE line on stderr naming the process, the variable or port, and the fix, and a non-zero exit; no stack trace.
import type { Server } from 'node:net';
import { describeDbError } from '../db/errors.js';

export const EXIT_CONFIG = 78; // EX_CONFIG: a variable or port to fix
export const EXIT_UNAVAILABLE = 69; // EX_UNAVAILABLE: a dependency that does not answer

/** Prints the one line and exits. */
export function failStartup(processName: string, line: string, code: number): never {
  process.stderr.write(`${processName}: ${line.replace(/:\n\s*/, ': ').replace(/\s*\n\s*/g, '; ')}\n`);
  process.exit(code);
}

const firstLine = (error: unknown) => String(error instanceof Error ? error.message : error).split('\n')[0]!.slice(0, 200);

/** host:port/database of a postgres URL, never its password. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}

/** Waits for `server` (already told to listen) to listen, or exits with the port, its variable and the fix. */
export function listening(processName: string, server: Server, variable: string, port: number): Promise<void> {
  return new Promise((resolve) => {
    if (server.listening) return resolve();
    server.once('listening', () => resolve());
    server.once('error', (error: NodeJS.ErrnoException) => failStartup(processName, portMessage(error, variable, port), EXIT_CONFIG));
  });
}

export function portMessage(error: NodeJS.ErrnoException, variable: string, port: number): string {
  if (error.code === 'EADDRINUSE') return `port ${port} (${variable}) is already in use; fix: stop what listens there or set ${variable} to a free port`;
  if (error.code === 'EACCES') return `port ${port} (${variable}) needs privileges; fix: set ${variable} to a port above 1023`;
  return `cannot listen on port ${port} (${variable}): ${error.code ?? firstLine(error)}; fix: set ${variable} to a free port`;
}

/** Runs a start-up step that reaches a dependency; its failure becomes the one line. */
export async function reach<T>(processName: string, what: { name: string; at: string; variable: string }, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const db = describeDbError(error);
    const cause = db ? `${db.code} ${db.message}` : ((error as NodeJS.ErrnoException).code ?? firstLine(error));
    failStartup(processName, `cannot reach ${what.name} at ${what.at} (${what.variable}): ${cause}; fix: start ${what.name} or correct ${what.variable}`, EXIT_UNAVAILABLE);
  }
}

/** R9: PostgreSQL answers `select 1` within the timeout, or the process stops with one line. */
export function checkDatabase(processName: string, url: string, ping: () => Promise<unknown>, timeoutMs = 10_000): Promise<void> {
  return reach(processName, { name: 'PostgreSQL', at: describeDatabaseUrl(url), variable: 'DATABASE_URL' }, async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)));
    try {
      await Promise.race([ping(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  });
}

/** Runs a start-up step that binds a port (e.g. serveMetrics); its failure becomes the one line with the variable. */
export async function bindPort<T>(processName: string, variable: string, port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    failStartup(processName, portMessage(error as NodeJS.ErrnoException, variable, port), EXIT_CONFIG);
  }
}
