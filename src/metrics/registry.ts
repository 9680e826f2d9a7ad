// One Prometheus registry per process, with the default Node.js metrics; each concern adds its own metrics file.
import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/**
 * The registry as Prometheus text. `withoutEndpointSeries` (the public listener, A18) drops every sample labelled
 * with an endpoint id: which endpoints exist and how each fares is for the operators' network only.
 */
export async function renderMetrics(
  options: { withoutEndpointSeries?: boolean } = {},
): Promise<{ contentType: string; body: string }> {
  const body = await registry.metrics();
  if (!options.withoutEndpointSeries) return { contentType: registry.contentType, body };
  const kept = body.split('\n').filter((line) => line.startsWith('#') || !/[{,]endpoint_id="/.test(line));
  return { contentType: registry.contentType, body: kept.join('\n') };
}

/** A counter in this registry: its name, help and labels are all a declaration needs to say. */
export const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
  new Counter<L>({ name, help, labelNames, registers: [registry] });
