// Connection settings and process secrets from the environment, parsed once; defaults match scripts/stack.sh.
// R18: the standard OTEL_* variables of tracing (off unless an OTLP endpoint is set; src/tracing/sdk.ts).
import { z } from 'zod';

/** R13: the test hook's value, <activity>[#n][@written|@journaled] (src/activities/step-fault.ts). */
export const STEP_FAULT_SPEC = /^([A-Za-z]+)(?:#([1-9][0-9]*))?(?:@(written|journaled))?$/;

/** `true` or `false`, default false. */
const bool = z.enum(['true', 'false']).default('false').transform((v) => v === 'true');

/**
 * Variables a process (or the migration Job) reads that are not parsed here, and who reads them: the Helm chart may
 * set these besides the schema's (test/unit/helm-chart.test.ts). PostgreSQL TLS is the URL's own `sslmode`
 * (`?sslmode=verify-full` in DATABASE_URL and MIGRATION_DATABASE_URL); a private CA for PostgreSQL and Kafka is
 * Node's NODE_EXTRA_CA_CERTS.
 */
export const ENV_READ_ELSEWHERE: Record<string, string> = {
  APIPAY_PROFILE: 'src/config/profile.ts',
  MIGRATION_DATABASE_URL: 'src/db/migrate.ts',
  DATABASE_APP_ROLE: 'src/db/migrate.ts',
  NODE_OPTIONS: 'node',
  NODE_EXTRA_CA_CERTS: 'node',
};

/** C11: JSON lines (the default, and always in production) or human lines (`npm start` sets pretty). */
const logFormat = z.enum(['json', 'pretty']).default('json');
export type LogFormat = z.output<typeof logFormat>;

/**
 * LOG_FORMAT for the processes that do not parse the whole environment (the sandbox, the drill) and for the logger's
 * default: the same rule as the schema's (pretty is refused in production: JSON is what log pipelines read).
 */
export function logFormatOf(source: Record<string, string | undefined>): LogFormat {
  const parsed = logFormat.safeParse(source.LOG_FORMAT === '' ? undefined : source.LOG_FORMAT);
  return parsed.success && !(parsed.data === 'pretty' && source.NODE_ENV === 'production') ? parsed.data : 'json';
}

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: logFormat,
  /** A6: the processes connect as the application role; migrations use MIGRATION_DATABASE_URL (the owner). */
  DATABASE_URL: z.string().default('postgres://apipay_app@127.0.0.1:5433/apipay'),
  DATABASE_POOL_MAX: z.coerce.number().int().positive().default(20),
  /** R5: every connection's statement_timeout (0 = none): a stuck query ends instead of holding a connection. */
  DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(30_000),
  /** R5: every connection's idle_in_transaction_session_timeout (0 = none): an abandoned transaction frees its locks. */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).default(60_000),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  /** A31: the frontend operators and the Temporal UI reach, when not TEMPORAL_ADDRESS (resolution_via_temporal: idp). */
  TEMPORAL_PUBLIC_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_UI_URL: z.string().default('http://127.0.0.1:8233'),
  /** Issue 22: TLS to the Temporal frontend (a self-hosted cluster behind TLS, or Temporal Cloud). */
  TEMPORAL_TLS: bool,
  /** PEM file of the CA that signed the frontend's certificate; unset: the system's roots. */
  TEMPORAL_TLS_CA_PATH: z.string().min(1).optional(),
  /** PEM files of the client certificate and key (mTLS; Temporal Cloud requires them). Both or neither. */
  TEMPORAL_TLS_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().min(1).optional(),
  /** The name the frontend's certificate carries, when the address does not (e.g. behind a load balancer). */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** A31: the IdP's token endpoint for the service token a Temporal frontend that authorizes tokens asks for. */
  TEMPORAL_OIDC_TOKEN_URL: z.url().optional(),
  /** A31: the service client (client-credentials grant only) and its secret; needed with TEMPORAL_OIDC_TOKEN_URL. */
  TEMPORAL_OIDC_CLIENT_ID: z.string().min(1).optional(),
  TEMPORAL_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  KAFKA_BROKERS: z.string().default('127.0.0.1:9092').transform((s) => s.split(',').map((b) => b.trim())),
  /** Issue 22: TLS to the brokers (system roots, plus NODE_EXTRA_CA_CERTS for a private CA). */
  KAFKA_SSL: bool,
  /** SASL over the connection (with KAFKA_SSL in production): plain, scram-sha-256 or scram-sha-512. */
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: z.string().optional(),
  KAFKA_SASL_PASSWORD: z.string().optional(),
  API_HOST: z.string().default('127.0.0.1'),
  API_PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  /**
   * R6, A18: when set, the API serves /metrics, /healthz and /readyz (with error detail) on this port of
   * API_METRICS_HOST. The public listener (API_PORT) answers 404 on /metrics unless API_METRICS_PUBLIC=true.
   */
  API_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** A18: also serve /metrics on the public listener, without its per-endpoint series. Off by default. */
  API_METRICS_PUBLIC: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  API_METRICS_HOST: z.string().default('127.0.0.1'),
  /** R6: how often gauges read from PostgreSQL (queue depth, manual review) are refreshed in the background. */
  METRICS_REFRESH_INTERVAL_MS: z.coerce.number().int().min(100).default(15_000),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9464),
  DISPATCHER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9465),
  /** Issue 22: the address those listeners bind; 0.0.0.0 in a pod, so the kubelet's probes and Prometheus reach it. */
  WORKER_METRICS_HOST: z.string().default('127.0.0.1'),
  DISPATCHER_METRICS_HOST: z.string().default('127.0.0.1'),
  /** Sticky-cache size of each worker (per task queue); bounds memory when many deliveries wait in timers. */
  WORKER_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).default(100),
  /** Workflow tasks in flight per worker; bounds the burst (and the memory it leaves resident). */
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: z.coerce.number().int().min(2).default(10),
  /** Activities and local activities (delivery attempts) in flight per worker. */
  WORKER_MAX_CONCURRENT_ACTIVITIES: z.coerce.number().int().min(1).default(20),
  /** P3: workflow-task slots of the reconciliation worker (its steps are local activities that hold the slot). */
  WORKER_RECONCILIATION_WORKFLOW_TASKS: z.coerce.number().int().min(2).default(40),
  /** P3: activity and local-activity slots of the reconciliation worker. */
  WORKER_RECONCILIATION_ACTIVITIES: z.coerce.number().int().min(1).default(40),
  /** M2: activity slots of the slow lane (attempts to endpoints that keep failing or hang), apart from the above. */
  WORKER_SLOW_LANE_ACTIVITIES: z.coerce.number().int().min(1).default(10),
  /** The dispatcher also runs a delivery worker, so its starts are eager (first workflow task without a poll). */
  DISPATCHER_DELIVERY_WORKER: z.enum(['true', 'false']).default('true').transform((v) => v === 'true'),
  /** Bearer token of the admin API; compared in constant time. */
  ADMIN_TOKEN: z.string().min(16, 'ADMIN_TOKEN must be at least 16 characters'),
  /** 32 bytes, base64: encrypts endpoint secrets at rest so a database dump alone does not reveal them. */
  SECRETS_ENCRYPTION_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'SECRETS_ENCRYPTION_KEY must be 32 bytes, base64-encoded'),
  /** A8: the id recorded with every secret SECRETS_ENCRYPTION_KEY seals; change it with the key. */
  SECRETS_ENCRYPTION_KEY_ID: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'SECRETS_ENCRYPTION_KEY_ID must be 1–32 letters, digits, _ or -').default('k1'),
  /** A8: earlier master keys, decrypt only, as id:base64,… — kept until `apipay secrets reencrypt` has run. */
  SECRETS_ENCRYPTION_PREVIOUS_KEYS: z.string().optional(),
  /**
   * R18: tracing is on when one of these OTLP/HTTP endpoints is set (the SDK's standard variables; the generic one gets
   * `/v1/traces` appended, the traces one is used as is). Unset: no SDK, no exporter, no span leaves the process.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  /** `key=value,…` sent with every export (e.g. a collector's API key); read by the exporter itself. */
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  /** Only `http/json` and `http/protobuf` are OTLP over HTTP; this build sends JSON (exporter-trace-otlp-http). */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/json', 'http/protobuf']).optional(),
  /** `none` turns tracing off even with an endpoint; `otlp` (the default) is the only exporter built in. */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).optional(),
  OTEL_SDK_DISABLED: bool,
  /** The resource's service.name; default `apipay-<process>` (api, worker, dispatcher). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** Extra resource attributes, `key=value,…` (e.g. deployment.environment=prod); read by the SDK. */
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  /** The SDK's samplers; default parentbased_always_on (every payment traced, a provider's sampled flag honoured). */
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .optional(),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  /** R18: the console links each reconciliation and delivery to `<APIPAY_TRACE_URL>/<trace id>` (Jaeger: …/trace). */
  APIPAY_TRACE_URL: z.url().optional(),
  /** R13 test hook: kill the worker right after a workflow step (src/activities/step-fault.ts); refused in production. */
  APIPAY_FAULT_AFTER_STEP: z
    .string()
    .regex(STEP_FAULT_SPEC, 'APIPAY_FAULT_AFTER_STEP must be <activity>[#n][@written|@journaled]')
    .optional(),
}).superRefine((env, ctx) => {
  if (env.NODE_ENV === 'production' && env.LOG_FORMAT === 'pretty')
    ctx.addIssue({ code: 'custom', path: ['LOG_FORMAT'], message: 'pretty is for npm start; production logs JSON lines (unset it or set json)' });
  if (env.NODE_ENV === 'production' && env.APIPAY_FAULT_AFTER_STEP)
    ctx.addIssue({ code: 'custom', path: ['APIPAY_FAULT_AFTER_STEP'], message: 'is a test hook and is refused when NODE_ENV=production' });
  // Issue 22: settings that only make sense together are refused apart, naming the missing variable.
  if (!!env.TEMPORAL_TLS_CERT_PATH !== !!env.TEMPORAL_TLS_KEY_PATH)
    ctx.addIssue({ code: 'custom', path: [env.TEMPORAL_TLS_CERT_PATH ? 'TEMPORAL_TLS_KEY_PATH' : 'TEMPORAL_TLS_CERT_PATH'], message: 'is needed with the other half of the client certificate pair' });
  if (env.TEMPORAL_OIDC_TOKEN_URL)
    for (const name of ['TEMPORAL_OIDC_CLIENT_ID', 'TEMPORAL_OIDC_CLIENT_SECRET'] as const)
      if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is needed with TEMPORAL_OIDC_TOKEN_URL' });
  if (env.KAFKA_SASL_MECHANISM)
    for (const name of ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const)
      if (!env[name]) ctx.addIssue({ code: 'custom', path: [name], message: 'is needed with KAFKA_SASL_MECHANISM' });
});

export type Env = z.output<typeof envSchema>;

/** Every variable this schema reads. */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

/** R9: how to fix each variable that has no safe default. */
const FIXES: Record<string, string> = {
  SECRETS_ENCRYPTION_KEY: 'set it to 32 random bytes in base64, e.g. `openssl rand -base64 32`',
  ADMIN_TOKEN: 'set it to a random string of at least 16 characters, e.g. `openssl rand -hex 24`',
};

export class EnvError extends Error {
  override name = 'EnvError';
  constructor(
    message: string,
    readonly issues: { variable: string; message: string }[] = [],
  ) {
    super(message);
  }
  /** R9: one line naming every bad variable and its fix, never a value. */
  get oneLine(): string {
    return this.issues
      .map(({ variable, message }) => `invalid ${variable}: ${message.replace(new RegExp(`^${variable} `), '')}; fix: ${FIXES[variable] ?? `correct ${variable} or unset it for the default`}`)
      .join('; ');
  }
}

export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const result = envSchema.safeParse(source);
  if (result.success) return result.data;
  // Name the variable, never echo its value: some of these are secrets.
  const issues = result.error.issues.map((issue) => ({ variable: issue.path.join('.'), message: issue.message }));
  const lines = issues.map((issue) => `  ${issue.variable}: ${issue.message}`);
  throw new EnvError(`invalid environment:\n${lines.join('\n')}`, issues);
}
