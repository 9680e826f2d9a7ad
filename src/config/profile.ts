// The adoption profile (requirements §5): read from APIPAY_PROFILE, validated once by a schema that names the bad key.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_REVIEW_WINDOW_MS } from '../shared/outbound.js';
import { formatDuration } from './duration.js';
import { httpSchema } from './http.js';
import { idpSchema } from './idp.js';
import { crossKeyProblem } from './profile-checks.js';
import { duration, majorAmount, rateLimit } from './profile-values.js';
import { provider } from './provider-entry.js';

export { secretRef } from './profile-values.js';

export const profileSchema = z.strictObject({
  /** A25: the organisation's OpenID Connect provider (src/config/idp.ts); absent: API keys only. */
  idp: idpSchema.optional(),
  /** The admin API (A7): every API key (and the bootstrap ADMIN_TOKEN) has its own bucket. */
  admin: z
    .strictObject({
      rate_limit: rateLimit.default({ per_second: 20, burst: 40 }),
      /** A17: failed bearer credentials and console/portal sign-ins per client address; past it 429 (A23: a right one passes). */
      failed_auth_per_address: rateLimit.default({ per_second: 0.2, burst: 20 }),
      /** A17: the same per key id (the apk_… part of a presented key), whatever address the guesses come from. */
      failed_auth_per_key: rateLimit.default({ per_second: 0.1, burst: 10 }),
      /** A18: the largest request body of any admin route, in bytes (413 past it, before it is read). */
      max_body_bytes: z.number().int().min(1024).default(1024 * 1024),
      /** A18: `GET /events/stream` connections open at once per API key, and per process. */
      max_streams_per_key: z.number().int().min(1).default(4),
      max_streams: z.number().int().min(1).default(64),
      /** A24: a signed admin request (resolve, approve, cancel) is refused when the workflow accepts it later than this. */
      signed_request_ttl: duration
        .prefault('5m')
        .refine((ms) => ms >= 10_000 && ms <= 3_600_000, 'must be between 10s and 1h (a few minutes: long enough for a retry)'),
    })
    .prefault({}),
  /** A23: trusted proxies (X-Forwarded-For, X-Forwarded-Proto) and the public URL (src/config/http.ts). */
  http: httpSchema,
  outbound: z.strictObject({
    kafka: z.strictObject({ topic: z.string().min(1), group: z.string().min(1) }),
    retry_schedule: z.array(duration).min(1),
    request_timeout: duration,
    response_excerpt_bytes: z.number().int().min(0).max(65_536),
    auto_disable_after: duration,
    secret_rotation_grace: duration,
    signature_tolerance_seconds: z.number().int().positive(),
    allow_insecure_urls: z.boolean(),
    /**
     * R3: how long an attempt reserved in flight belongs to the execution that reserved it (> request_timeout). A
     * retried attempt activity that finds it younger waits for that execution's outcome instead of recording it
     * `interrupted` (docs/outbound.md, "Attempt once"); an older one was lost with its worker.
     */
    in_flight_lease: duration.prefault('30s'),
    /** O12: how long a FAILED delivery's workflow keeps waiting for an operator's retryNow before it closes. */
    review_window: duration.prefault(formatDuration(DEFAULT_REVIEW_WINDOW_MS)),
    /** M2: when an endpoint's attempts leave the normal lane for the slow lane (docs/outbound.md, "Lanes"). */
    lanes: z
      .strictObject({
        slow_after_failures: z.number().int().min(1).default(3),
        max_in_flight_per_endpoint: z.number().int().min(1).default(4),
        max_in_flight_proven: z.number().int().min(1).default(32),
        slow_attempt_after: duration.prefault('5s'),
      })
      .prefault({}),
    /**
     * P12: no stampede when a merchant comes back (docs/outbound.md, "Recovery"). Each retry waits up to `jitter` ×
     * its wait longer (derived from the delivery id and attempt number); after an endpoint whose every attempt failed
     * for `ramp_after` answers 2xx, its send rate starts at `ramp_start_per_second` and doubles every `ramp_interval`
     * up to its configured or learnt rate (M5, O18), or `ramp_max_per_second` for an unthrottled endpoint.
     */
    recovery: z
      .strictObject({
        jitter: z.number().min(0).max(1).default(0.2),
        ramp: z.boolean().default(true),
        ramp_after: duration.prefault('30s'),
        ramp_start_per_second: z.number().min(0.1).max(10_000).default(5),
        ramp_interval: duration.pipe(z.number().min(100, 'ramp_interval must be at least 100ms')).prefault('10s'),
        ramp_max_per_second: z.number().min(0.1).max(100_000).default(100),
      })
      .refine((r) => r.ramp_start_per_second <= r.ramp_max_per_second, 'ramp_start_per_second must not exceed ramp_max_per_second')
      .prefault({}),
    /** P13: the endpoint circuit and parked deliveries (docs/outbound.md, "The endpoint circuit"); 0 failures: off. */
    circuit: z
      .strictObject({
        open_after_failures: z.number().int().min(0).default(3),
        open_after: duration.prefault('1m'),
        /** P16: or open at once when this many attempts in a row failed, however young the streak (0: only open_after). */
        open_after_burst: z.number().int().min(0).default(3),
        probe_every: duration.pipe(z.number().min(1000, 'probe_every must be at least 1s')).prefault('1m'),
        release_tick: duration.pipe(z.number().min(100, 'release_tick must be at least 100ms')).prefault('1s'),
      })
      .prefault({}),
    /**
     * P1: `per_delivery` starts one workflow per delivery (its first attempt a local activity); `batched` makes the
     * dispatcher send the first attempts of a Kafka batch itself and start a workflow only for those that need a
     * retry (docs/outbound.md, "Batched delivery mode").
     */
    delivery_mode: z.enum(['per_delivery', 'batched']).default('per_delivery'),
    /**
     * O21 (docs/outbound.md, "Checked against the catalog"): every event's data.object is validated against its
     * catalog schema before fan-out (`validate: false` only to measure the check's cost); an event whose type is not
     * in the catalog is quarantined, or with `unknown_types: deliver` fanned out unchecked (a migration aid).
     */
    catalog: z
      .strictObject({
        validate: z.boolean().default(true),
        unknown_types: z.enum(['quarantine', 'deliver']).default('quarantine'),
      })
      .prefault({}),
    /**
     * P9: the partition batches of one Kafka fetch are handled together (one fan-out transaction, one dispatch) while
     * their messages add up to fewer than this; 1: each batch alone (src/dispatcher/coalesce.ts).
     */
    coalesce_batches: z.number().int().min(1).max(100_000).default(512),
    batched: z
      .strictObject({
        /** First-attempt POSTs in flight per Kafka batch; also the size of one reservation chunk. */
        concurrency: z.number().int().min(1).max(1024).default(128),
        /**
         * P2: deliveries whose first attempts may still be running after their batch's offsets were committed (the
         * sweep covers them from the fan-out commit on); the consumer fetches on meanwhile. 0: the offsets wait for
         * every first attempt of the batch.
         */
        pipeline_depth: z.number().int().min(0).max(100_000).default(512),
        /**
         * P9: pipelined sends running at once; deliveries submitted meanwhile wait in hand and go out together in the
         * next send (fewer statements and pool connections per delivery under load). 4: steady 200/s p99 medians 147
         * and 78 ms against 321 and 156 ms with every batch its own send (1024), docs/benchmarks.md.
         */
        pipeline_sends: z.number().int().min(1).max(1024).default(4),
        /**
         * P9: how long a dispatcher reuses an endpoint's opened signing material for its first attempts (a rotation
         * reaches it within this; the replaced secret verifies for the rotation's grace meanwhile). 0: a lookup per send.
         */
        signer_ttl: duration.prefault('1s'),
        /**
         * P13: how long a chunk of first attempts waits for its POSTs (with pipeline_depth > 0); those still running are
         * recorded when they end, off the chunk, and their endpoint's next deliveries go to their workflows meanwhile.
         */
        patience: duration.prefault('1s'),
        /** How often the dispatcher looks for deliveries it fanned out but never handed off (a kill -9). */
        sweep_interval: duration.prefault('15s'),
        /** A hand-off this old (and no attempt in flight younger than it) is taken over by the sweep; > request_timeout. */
        handoff_grace: duration.prefault('1m'),
      })
      .prefault({}),
  }),
  inbound: z.strictObject({
    max_body_bytes: z.number().int().positive(),
    dedupe_store_ttl_days: z.number().positive(),
    reconciliation_timeout: duration,
    provider_query_backoff: z.strictObject({
      initial: duration,
      multiplier: z.number().min(1),
      maximum: duration,
    }),
    allow_provisional_access: z.boolean(),
    /** R2: an admin resolution answers within this (202 with the current state if the workflow is slower). */
    resolution_request_timeout: duration.prefault('10s'),
    /**
     * A4: a resolution sent to Temporal directly (UI, `temporal workflow update/signal`): accepted and attributed, or
     * refused. A31 `idp`: accepted only under the identity ApiPay's Temporal server stamped (`idp:<sub>@<issuer>`),
     * which then counts as that person; the worker checks at start that the server refuses unauthenticated callers.
     */
    resolution_via_temporal: z.enum(['allow', 'deny', 'idp']).default('deny'),
    /** A5: per currency, minor units: a resolution about more than this needs a second principal's approval. */
    dual_control_above: z.record(z.string().regex(/^[A-Z]{3}$/, 'currencies are ISO 4217 codes'), z.coerce.bigint().min(0n)).default({}),
    /**
     * A11/A22: the limit of every currency dual_control_above does not name, in MAJOR units scaled by the currency's
     * ISO 4217 exponent (1000: EUR 1,000.00, JPY 1,000, KWD 1,000.000); absent: the smallest limit the map names.
     */
    dual_control_default_major: majorAmount.optional(),
    /** A22: the minor-unit default this replaced; refused by name so that an old profile does not silently mean 100× more. */
    dual_control_default_above: z
      .never({ error: 'was one minor-unit number for every currency; use dual_control_default_major (major units, e.g. 1000)' })
      .optional(),
    unstarted_sweep_interval: duration,
    unstarted_grace: duration,
    /** P7: reconciliation workflow starts per second per process (ingress starter and sweep together); 0 = unlimited. */
    reconciliation_start_rate: z.number().min(0).default(0),
    /**
     * P3: workflow tasks allowed to wait in the reconciliation task queue before the ingress starter and the sweep
     * hold further starts (src/inbound/backlog-gate.ts); receipts wait in PostgreSQL instead. 0 = no gate.
     */
    reconciliation_backlog_max: z.number().int().min(0).default(500),
    /** R5: receipts held in memory by the receipt writer (waiting or committing) at most; past it the ingress answers 503. */
    receipt_queue_max: z.number().int().positive().default(10_000),
    /** R5: the same bound in raw body bytes. */
    receipt_queue_max_bytes: z.number().int().positive().default(64 * 1024 * 1024),
    /** R5: a receipt not committed within this answers 503 (PostgreSQL too slow); a late commit is a duplicate on retry. */
    receipt_commit_deadline: duration.prefault('5s'),
    /** R5: the Retry-After of those 503s. */
    overload_retry_after: duration.prefault('5s'),
    /** A7: each provider's own bucket on POST /webhooks/{provider}; past it 429 with Retry-After (providers retry). */
    rate_limit: rateLimit.default({ per_second: 500, burst: 1000 }),
    /** A17: requests that fail signature verification, per client address; past it 429 (A23: a verified one passes). */
    unverified_per_address: rateLimit.default({ per_second: 5, burst: 50 }),
    providers: z.record(z.string().regex(/^[a-z0-9-]+$/, 'provider names are lowercase, digits and dashes'), provider),
  }),
  /** O19: outbound event bodies (and their attempts' response excerpts) are expunged this long after receipt. */
  retention: z
    .strictObject({
      bodies: duration.prefault('90d'),
      /** The worker's sweep: at most this many events per transaction, one batch after another until none is left. */
      sweep_batch: z.number().int().min(1).max(100_000).default(1000),
      sweep_interval: duration.prefault('10m'),
    })
    .prefault({}),
});

export type Profile = z.output<typeof profileSchema>;
export type ProviderConfig = Profile['inbound']['providers'][string];

export class ProfileError extends Error {
  override name = 'ProfileError';
}

export interface ProfileOptions {
  /** The process's NODE_ENV; some settings are for development only. Default process.env.NODE_ENV. */
  nodeEnv?: string;
}

/** Validates a parsed profile document; the error names every bad key by its dotted path. */
export function parseProfile(document: unknown, source = 'profile', options: ProfileOptions = {}): Profile {
  const result = profileSchema.safeParse(document);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new ProfileError(`invalid ${source}:\n${lines.join('\n')}`);
  }
  const problem = crossKeyProblem(result.data, options.nodeEnv ?? process.env.NODE_ENV);
  if (problem) throw new ProfileError(`invalid ${source}:\n  ${problem}`);
  return result.data;
}

export function loadProfile(path = process.env.APIPAY_PROFILE ?? 'config/example.yaml', options: ProfileOptions = {}): Profile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ProfileError(`cannot read profile ${path} (APIPAY_PROFILE): ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new ProfileError(`profile ${path} is not valid YAML: ${(error as Error).message}`);
  }
  return parseProfile(document, `profile ${path}`, options);
}
