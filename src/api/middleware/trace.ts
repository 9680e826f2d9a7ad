// R18: the server span of every API request (health and metrics probes aside), active while the route runs, so the
// ingress's receipt and its reconciliation start belong to it. A provider's own traceparent is linked, not adopted:
// the payment's trace starts at our edge.
import type { MiddlewareHandler } from 'hono';
import { context, propagation, trace, type Link } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { tracer } from '../../tracing/context.js';

const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

export function traceRequests(): MiddlewareHandler {
  return async (c, next) => {
    if (UNTRACED.has(c.req.path)) return next();
    const incoming = trace.getSpanContext(propagation.extract(context.active(), c.req.header()));
    const links: Link[] = incoming ? [{ context: incoming }] : [];
    // A fresh root: the active context is emptied so nothing of a caller's becomes our parent.
    return tracer().startActiveSpan(
      `${c.req.method} ${c.req.path.startsWith('/webhooks/') ? '/webhooks/:provider' : c.req.path}`,
      { kind: SpanKind.SERVER, root: true, links, attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path } },
      async (span) => {
        try {
          await next();
          span.setAttribute('http.route', c.req.routePath);
          span.setAttribute('http.response.status_code', c.res.status);
          if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        } finally {
          span.end();
        }
      },
    );
  };
}
