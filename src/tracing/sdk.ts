// R18: starts OpenTelemetry tracing in a process when the standard OTEL_* variables ask for it (src/config/env.ts):
// the NodeSDK with one OTLP-over-HTTP (JSON) exporter, W3C trace context, a service.name per process. Off by
// default: no SDK, no exporter, and the global tracer stays the API's no-op one.
import type { Resource } from '@opentelemetry/resources';
import { Resource as SdkResource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Env } from '../config/env.js';

export type TracingEnv = Pick<
  Env,
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_TRACES_EXPORTER'
  | 'OTEL_SDK_DISABLED'
  | 'OTEL_SERVICE_NAME'
>;

export interface Tracing {
  readonly enabled: boolean;
  /** The process's resource (service.name), for the Temporal workflow-span sink. */
  readonly resource: Resource;
  /** Where spans go: the SDK's batch processor, or a no-op one when tracing is off. */
  readonly spanProcessor: SpanProcessor;
  /** Flushes and stops the SDK (last in a process's shutdown). */
  shutdown(): Promise<void>;
}

/** On when an OTLP endpoint is set, unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. */
export function tracingEnabled(env: TracingEnv): boolean {
  if (env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Where spans go: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces (the spec's rule). */
export function tracesUrl(env: TracingEnv): string {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return `${env.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
}

/** The service name this process reports: OTEL_SERVICE_NAME, else apipay-<process>. */
export function serviceName(env: TracingEnv, processName: string): string {
  return env.OTEL_SERVICE_NAME ?? `apipay-${processName}`;
}

export const TRACING_OFF: Tracing = {
  enabled: false,
  resource: SdkResource.empty(),
  spanProcessor: new NoopSpanProcessor(),
  shutdown: async () => {},
};

let started: Tracing | undefined;

/** The tracing this process started (startTracing), else off: what the Temporal clients and workers pick up. */
export function activeTracing(): Tracing {
  return started ?? TRACING_OFF;
}

/**
 * Call first in a process, before any client is built. The endpoint is the parsed one (tracesUrl); the exporter reads
 * OTEL_EXPORTER_OTLP_HEADERS and its timeout itself, the SDK OTEL_TRACES_SAMPLER (default parentbased_always_on)
 * and OTEL_RESOURCE_ATTRIBUTES.
 */
export function startTracing(processName: string, env: TracingEnv): Tracing {
  if (started) return started;
  if (!tracingEnabled(env)) return (started = TRACING_OFF);
  const resource = new SdkResource({ [ATTR_SERVICE_NAME]: serviceName(env, processName) });
  // Short batches: a payment's spans reach the collector within a second of its POST (the demo's Jaeger, the test).
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(env) }), { scheduledDelayMillis: 500 });
  const sdk = new NodeSDK({ resource, autoDetectResources: false, spanProcessors: [spanProcessor], instrumentations: [] });
  sdk.start();
  return (started = { enabled: true, resource, spanProcessor, shutdown: () => sdk.shutdown() });
}
