// GET /metrics: the process's Prometheus registry.
import type { Hono } from 'hono';
import { renderMetrics } from '../metrics/registry.js';

export function registerMetrics(app: Hono): void {
  app.get('/metrics', async (c) => {
    const { contentType, body } = await renderMetrics();
    return c.body(body, 200, { 'content-type': contentType });
  });
}
