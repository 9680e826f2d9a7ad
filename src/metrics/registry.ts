// One Prometheus registry per process, with the default Node.js metrics; each concern adds its own metrics file.
import { collectDefaultMetrics, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
