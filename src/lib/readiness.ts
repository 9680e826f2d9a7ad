// Readiness of one process (R5): each check names a dependency that process needs (API: PostgreSQL; worker:
// PostgreSQL + Temporal; dispatcher: PostgreSQL + Temporal + Kafka). The answer says which one is down; the error
// text only on a private listener (`detail`), since it can carry internal addresses. Failures go to the log.
import type { Logger } from './logger.js';

export type ReadinessChecks = Record<string, () => Promise<unknown>>;

export interface ReadinessAnswer {
  ready: boolean;
  body: { status: 'ready' | 'unavailable'; checks: Record<string, { ok: boolean; error?: string }> };
}

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface ReadinessProbe {
  check(options?: { detail?: boolean }): Promise<ReadinessAnswer>;
}

/** Runs every check on each call (no cached verdict); logs a dependency when it goes down and when it is back. */
export function createReadinessProbe(checks: ReadinessChecks, logger?: Logger, timeoutMs = CHECK_TIMEOUT_MS): ReadinessProbe {
  const down = new Set<string>();
  return {
    async check({ detail = false } = {}) {
      const entries = await Promise.all(
        Object.entries(checks).map(async ([name, run]) => {
          try {
            await withTimeout(Promise.resolve().then(run), timeoutMs);
            if (down.delete(name)) logger?.info({ dependency: name }, 'readiness: dependency answers again');
            return [name, { ok: true }] as const;
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            if (!down.has(name)) logger?.warn({ dependency: name, error: message }, 'readiness: dependency does not answer');
            down.add(name);
            return [name, detail ? { ok: false, error: message } : { ok: false }] as const;
          }
        }),
      );
      const ready = entries.every(([, result]) => result.ok);
      return { ready, body: { status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(entries) } };
    },
  };
}
