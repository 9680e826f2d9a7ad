// One Prometheus registry per process, with the default Node.js metrics; each concern adds its own metrics file.
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** A counter in this registry: its name, help and labels are all a declaration needs to say. */
export const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
  new Counter<L>({ name, help, labelNames, registers: [registry] });
