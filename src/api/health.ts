// /healthz (the process is alive) and /readyz (this process's dependencies answer, else 503; src/lib/readiness.ts).
// On the public listener /readyz names the dependency that is down but never echoes its error text (R5).
import type { Hono } from 'hono';
import { createReadinessProbe } from '../lib/readiness.js';
import type { ApiDeps } from './deps.js';

export function registerHealth(app: Hono, deps: Pick<ApiDeps, 'readiness' | 'logger'>): void {
  const probe = createReadinessProbe(deps.readiness, deps.logger);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const { ready, body } = await probe.check({ detail: false });
    return c.json(body, ready ? 200 : 503);
  });
}
