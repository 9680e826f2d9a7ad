// R18: tracing is off unless an OTLP endpoint is configured: no SDK is started, no exporter exists, the global
// tracer records nothing and no traceparent is kept in a row or a Kafka header; the OTEL_* variables are parsed once.
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/config/env.js';
import { contextFrom, currentTraceparent, openSpan, traceIdOf } from '../../src/tracing/context.js';
import { serviceName, startTracing, TRACING_OFF, tracesUrl, tracingEnabled } from '../../src/tracing/sdk.js';
import { tracingActivityInterceptors, tracingClientInterceptors } from '../../src/tracing/temporal.js';

const base = { ADMIN_TOKEN: 'x'.repeat(24), SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };

describe('R18 tracing off by default', () => {
  it('no OTEL variable: not enabled, startTracing starts nothing, the global tracer does not record', async () => {
    const env = parseEnv(base);
    expect(tracingEnabled(env)).toBe(false);
    const tracing = startTracing('api', env);
    expect(tracing).toBe(TRACING_OFF);
    expect(tracing.enabled).toBe(false);
    expect(tracingClientInterceptors(tracing).workflow).toEqual([]);
    expect(tracingActivityInterceptors(tracing)).toEqual([]);
    const span = trace.getTracer('t').startSpan('x');
    expect(span.isRecording()).toBe(false);
    span.end();
    const open = openSpan('publish', {});
    expect(open.headers).toEqual({}); // no traceparent header on a Kafka message
    expect(open.traceparent).toBeNull();
    open.end();
    expect(currentTraceparent()).toBeNull(); // nothing kept in a receipt or outbox row
    await tracing.shutdown();
  });

  it('an endpoint turns it on; OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turn it off again', () => {
    expect(tracingEnabled(parseEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }))).toBe(true);
    expect(tracingEnabled(parseEnv({ ...base, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }))).toBe(true);
    expect(tracingEnabled(parseEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }))).toBe(
      false,
    );
    expect(
      tracingEnabled(parseEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })),
    ).toBe(false);
  });

  it('bad OTEL values are refused at start, naming the variable', () => {
    expect(() => parseEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => parseEnv({ ...base, OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => parseEnv({ ...base, OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => parseEnv({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });

  it('the traces URL: the traces endpoint as is, else the generic one with /v1/traces', () => {
    expect(tracesUrl(parseEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }))).toBe('http://c:4318/v1/traces');
    expect(
      tracesUrl(
        parseEnv({
          ...base,
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/x',
        }),
      ),
    ).toBe('http://t:4318/x');
  });

  it('service names: OTEL_SERVICE_NAME, else apipay-<process>', () => {
    expect(serviceName(parseEnv(base), 'worker')).toBe('apipay-worker');
    expect(serviceName(parseEnv({ ...base, OTEL_SERVICE_NAME: 'pay-api' }), 'api')).toBe('pay-api');
  });

  it('a kept traceparent gives its trace id; junk or the all-zero id gives none', () => {
    expect(traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeNull();
    expect(traceIdOf('nonsense')).toBeNull();
    expect(traceIdOf(null)).toBeNull();
    expect(contextFrom(null)).toBeDefined();
  });
});
