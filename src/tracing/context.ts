// R18: carrying one trace across process boundaries that are not RPCs: a W3C `traceparent` kept in a database row
// (receipt, outbox row, event) or a Kafka message's headers, and spans around the steps between them.
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

/** The tracer every hand-written span of this service uses. */
export const tracer = () => trace.getTracer('apipay');

/** The active context's `traceparent`, or null (tracing off, or no span active): what a row or message keeps. */
export function currentTraceparent(from: Context = context.active()): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier.traceparent ?? null;
}

/** The context a kept `traceparent` (or a message's headers) stands for; the root context when there is none. */
export function contextFrom(carrier: string | null | undefined | Record<string, unknown>): Context {
  if (!carrier) return context.active();
  const headers: Record<string, string> = {};
  if (typeof carrier === 'string') headers.traceparent = carrier;
  else for (const [key, value] of Object.entries(carrier)) if (value != null) headers[key.toLowerCase()] = String(value);
  return propagation.extract(context.active(), headers);
}

/** The 32-hex trace id inside a `traceparent`, or null: what the console links to. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '');
  return match && !/^0+$/.test(match[1]!) ? match[1]! : null;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; default the active context. */
  parent?: Context;
}

/** A span (not made active) the caller ends, with the headers that carry it (a Kafka message's, W3C trace context). */
export interface OpenSpan {
  span: Span;
  context: Context;
  headers: Record<string, string>;
  traceparent: string | null;
  /** Ends the span, failed when `error` is given. */
  end(error?: unknown): void;
}

export function openSpan(name: string, options: SpanOptions): OpenSpan {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} },
    parent,
  );
  const spanContext = trace.setSpan(parent, span);
  const headers: Record<string, string> = {};
  propagation.inject(spanContext, headers);
  return {
    span,
    context: spanContext,
    headers,
    traceparent: headers.traceparent ?? null,
    end(error?: unknown) {
      if (error !== undefined) {
        const type = error instanceof Error ? error.name : 'Error';
        span.setAttribute('error.type', type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: type });
      }
      span.end();
    },
  };
}

/** Runs `fn` inside a new active span that ends with it; a thrown error marks the span failed. */
export async function inSpan<T>(name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} },
    parent,
    async (span) => {
      try {
        return await fn();
      } catch (error) {
        // R1: the error's class only, never its message (a database error's could hold a query's parameters).
        const type = error instanceof Error ? error.name : 'Error';
        span.setAttribute('error.type', type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: type });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

export { context, SpanKind, type Context };
