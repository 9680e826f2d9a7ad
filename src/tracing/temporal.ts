// R18: the Temporal SDK's OpenTelemetry interceptors (@temporalio/interceptors-opentelemetry): client starts carry the
// active context in the workflow's headers, workflows and their (local) activities get spans, and the workflow
// spans leave the sandbox through the `exporter` sink into this process's span processor.
import { createRequire } from 'node:module';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetryWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { TRACING_OFF, type Tracing } from './sdk.js';

/**
 * The workflow interceptor module, bundled with the workflows at start and at build time (bundleWorkflowCode's
 * workflowInterceptorModules): always in the bundle, so a release's bundle is the same with tracing on or off.
 */
export const WORKFLOW_TRACING_MODULE = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);

/** A Temporal client's interceptors: a span per start/signal/query, its context passed in the request's headers. */
export function tracingClientInterceptors(tracing: Tracing): { workflow: WorkflowClientInterceptor[] } {
  return { workflow: tracing.enabled ? [new OpenTelemetryWorkflowClientInterceptor()] : [] };
}

/** A worker's activity interceptors: a span per activity and local activity, child of the workflow's. */
export function tracingActivityInterceptors(tracing: Tracing): ActivityInterceptorsFactory[] {
  if (!tracing.enabled) return [];
  return [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
  ];
}

/**
 * The sink the bundled workflow interceptor sends its spans to; always registered (with tracing off it drops them),
 * so the same bundle runs in every process, replays included.
 */
export function tracingSinks(tracing: Tracing = TRACING_OFF): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  return { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) };
}
