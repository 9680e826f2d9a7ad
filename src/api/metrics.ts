// GET /metrics on the public listener, when the environment asks for it (API_METRICS_PUBLIC, A18): the process's
// Prometheus registry without the per-endpoint series (those are on the private listener only).
import type { Hono } from 'hono';
import { renderMetrics } from '../metrics/registry.js';

export function registerMetrics(app: Hono): void {
  app.get('/metrics', async (c) => {
    const { contentType, body } = await renderMetrics({ withoutEndpointSeries: true });
    return c.body(body, 200, { 'content-type': contentType });
  });
}
