// /healthz (the process is alive) and /readyz (PostgreSQL, Temporal and Kafka all answer, else 503).
import type { Hono } from 'hono';
import type { ApiDeps } from './deps.js';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref()),
  ]);
}

export function registerHealth(app: Hono, deps: Pick<ApiDeps, 'readiness'>): void {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const entries = await Promise.all(
      Object.entries(deps.readiness).map(async ([name, check]) => {
        try {
          await withTimeout(check(), CHECK_TIMEOUT_MS);
          return [name, { ok: true }] as const;
        } catch (error) {
          return [name, { ok: false, error: (error as Error).message }] as const;
        }
      }),
    );
    const checks = Object.fromEntries(entries);
    const ready = entries.every(([, result]) => result.ok);
    return c.json({ status: ready ? 'ready' : 'unavailable', checks }, ready ? 200 : 503);
  });
}
