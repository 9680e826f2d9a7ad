// Issue 31 item 1, P1 with O7, O13, O18, M2, M4: one attempt path for both delivery modes. The same table of hostile
// merchant answers goes through the per-delivery mode's attempt activity and through the batched dispatcher's first
// attempts (createFirstAttempts(...).run(), its hand-off to a task queue nobody polls), each on a fresh delivery to an
// endpoint of its own, and the two must leave the same attempt, delivery, endpoint and status-change rows, the same
// Prometheus deltas and the same log lines (ids and times normalised). The one intended difference, what happens
// after attempt 1 (the activity answers its running workflow; the dispatcher starts one with the row to resume
// from), is asserted explicitly. Real PostgreSQL, Temporal dev server, real local merchants.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { defaultPayloadConverter } from '@temporalio/common';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeliveryActivities, type AttemptResult } from '../../src/activities/delivery.js';
import { deliveries, deliveryAttempts, endpointStatusChanges, webhookEndpoints } from '../../src/db/schema/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { registry } from '../../src/metrics/registry.js';
import { timerWait } from '../../src/outbound/retry-policy.js';
import type { DeliveryWorkflowInput } from '../../src/shared/outbound.js';
import { attemptsOf, batchedFirstAttempt } from '../helpers/attempts.js';
import { TEST_SECRETS_KEY } from '../helpers/env.js';
import { insertDelivery, insertEndpoint, startReceiver, uniqueMerchant, type Reply } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { startRawMerchant } from '../helpers/raw-merchant.js';
import { useWorld } from '../helpers/world.js';
import { terminateWorkflows } from '../helpers/temporal.js';

const world = useWorld({ label: 'modes' });
// Short for the timeout and drip cases, long enough that a loaded 2-core machine reads a prompt answer (as R3's file).
const TIMEOUT_MS = 2500;
const SCHEDULE = ['1m', '5m', '30m'];
const FIRST_WAIT_MS = 60_000;
const profile = testProfile({
  outbound: { request_timeout: `${TIMEOUT_MS}ms`, retry_schedule: SCHEDULE, auto_disable_after: '1d' },
});
const UNPOLLED = `test-delivery-modes-unpolled-${process.pid}-${Date.now()}`; // the batched hand-off: nobody runs them

// Every log line of both modes, as JSON (pino at debug: the per-attempt line is a debug line).
const lines: Record<string, unknown>[] = [];
const logger = createLogger('modes', 'debug', {
  write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
});

interface Case {
  name: string;
  /** The answer, from the HTTP merchant (startReceiver), or `raw`/`refused` for the other merchants. */
  reply?: Reply;
  url?: 'drip' | 'refused';
  /** The endpoint before the attempt: inside an O13 streak since `failingForMs`, with `failures` in a row. */
  before?: { failingForMs: number; failures: number };
  expect: { status: number | null; kind: string | null; delivery: string; endpoint: string; reason?: RegExp };
}

const cases: Case[] = [
  { name: '200', reply: { status: 200 }, expect: { status: 200, kind: null, delivery: 'DELIVERED', endpoint: 'enabled' } },
  {
    name: '500',
    reply: { status: 500, body: 'boom' },
    expect: { status: 500, kind: 'server_error', delivery: 'RETRYING', endpoint: 'enabled' },
  },
  // O18: a Retry-After longer than the first wait (10 min > 1 min) moves the next attempt; the cap is the last wait.
  {
    name: '503 Retry-After 600',
    reply: { status: 503, headers: { 'retry-after': '600' } },
    expect: { status: 503, kind: 'server_error', delivery: 'RETRYING', endpoint: 'enabled' },
  },
  {
    name: '503 Retry-After 7200 (clamped to 30m)',
    reply: { status: 503, headers: { 'retry-after': '7200' } },
    expect: { status: 503, kind: 'server_error', delivery: 'RETRYING', endpoint: 'enabled' },
  },
  // O18: a 429 lowers the endpoint's rate (backoff) instead of counting towards the O13 disable.
  {
    name: '429 Retry-After 120',
    reply: { status: 429, headers: { 'retry-after': '120' } },
    expect: { status: 429, kind: 'client_error', delivery: 'RETRYING', endpoint: 'enabled' },
  },
  {
    name: '410 Gone',
    reply: { status: 410 },
    expect: { status: 410, kind: 'client_error', delivery: 'FAILED', endpoint: 'disabled', reason: /^gone$/ },
  },
  {
    name: 'timeout',
    reply: { status: 200, delayMs: TIMEOUT_MS + 1500 },
    expect: { status: null, kind: 'timeout', delivery: 'RETRYING', endpoint: 'enabled' },
  },
  {
    name: 'connection refused',
    url: 'refused',
    expect: { status: null, kind: 'connection', delivery: 'RETRYING', endpoint: 'enabled' },
  },
  // R3: a body dripping one byte every 100 ms: the total deadline ends it with what came; the 2xx counts.
  { name: 'slow-drip body', url: 'drip', expect: { status: 200, kind: null, delivery: 'DELIVERED', endpoint: 'enabled' } },
  // O13: every attempt failed for longer than auto_disable_after: this failure disables the endpoint.
  {
    name: '500 ending a 2-day streak',
    reply: { status: 500 },
    before: { failingForMs: 2 * 86_400_000, failures: 2 },
    expect: {
      status: 500,
      kind: 'server_error',
      delivery: 'FAILED',
      endpoint: 'disabled',
      reason: /^auto-disabled: every attempt failed since/,
    },
  },
  // O13, M2: a 2xx ends a running streak (failing_since and the consecutive failures both reset).
  {
    name: '200 after a 1-hour streak',
    reply: { status: 200 },
    before: { failingForMs: 3_600_000, failures: 2 },
    expect: { status: 200, kind: null, delivery: 'DELIVERED', endpoint: 'enabled' },
  },
];

const replies = new Map<string, Reply>(); // path → answer
let http: Awaited<ReturnType<typeof startReceiver>>;
let raw: Awaited<ReturnType<typeof startRawMerchant>>;
let refusedUrl: string;
const started: string[] = []; // the batched mode's hand-off workflows, terminated after the file

beforeAll(async () => {
  http = await startReceiver((request) => replies.get(request.path.split('?')[0]!) ?? { status: 404 });
  raw = await startRawMerchant({
    '/drip': (socket, { keepWriting }) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
      keepWriting('1\r\nz\r\n', 100);
    },
  });
  // A port that was just free: nothing listens there, the connection is refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  refusedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/refused`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
});
afterAll(async () => {
  await terminateWorkflows(world.temporal.client, started);
  await http?.close();
  await raw?.close();
});

const COUNTERS = [
  'apipay_outbound_attempts_total',
  'apipay_outbound_attempt_latency_seconds', // only its _count: how many attempts of each outcome were timed
  'apipay_outbound_deliveries_total',
  'apipay_outbound_retries_scheduled_total',
  'apipay_outbound_endpoints_disabled_total',
  'apipay_outbound_endpoint_status_changes_total',
  'apipay_outbound_attempts_deferred_total',
];

async function counters(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const metric of await registry.getMetricsAsJSON()) {
    if (!COUNTERS.includes(metric.name)) continue;
    for (const v of metric.values as { value: number; labels: Record<string, unknown>; metricName?: string }[]) {
      const name = v.metricName ?? metric.name;
      if (name.endsWith('_bucket') || name.endsWith('_sum')) continue; // a histogram: its _count only
      out.set(`${name}${JSON.stringify(v.labels)}`, v.value);
    }
  }
  return out;
}
const delta = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]).filter(([, d]) => d !== 0));

/** A fresh endpoint (and its state before the attempt) and one PENDING delivery to it, for one case in one mode. */
async function fresh(c: Case, mode: string) {
  const merchantAccount = uniqueMerchant('modes');
  const path = `/${mode}/${merchantAccount}`;
  if (c.reply) replies.set(path, c.reply);
  const url = c.url === 'refused' ? refusedUrl : c.url === 'drip' ? `${raw.url}/drip` : `${http.url}${path}`;
  const endpoint = await insertEndpoint(world.db, { merchantAccount, url });
  if (c.before)
    await world.db
      .update(webhookEndpoints)
      .set({ failingSince: new Date(Date.now() - c.before.failingForMs), consecutiveFailures: c.before.failures })
      .where(eq(webhookEndpoints.id, endpoint.id));
  const delivery = await insertDelivery(world.db, { endpointId: endpoint.id, merchantAccount });
  return { merchantAccount, url, endpointId: endpoint.id, ...delivery };
}

type Fresh = Awaited<ReturnType<typeof fresh>>;

/** What one attempt left behind, with ids replaced and every time made relative to the attempt's scheduled time. */
async function observe(d: Fresh, scheduledAt: number, logged: Record<string, unknown>[], metrics: Record<string, number>) {
  const [attempt, ...more] = await world.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, d.deliveryId));
  const [delivery] = await world.db.select().from(deliveries).where(eq(deliveries.id, d.deliveryId));
  const [endpoint] = await world.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, d.endpointId));
  const changes = await world.db.select().from(endpointStatusChanges).where(eq(endpointStatusChanges.endpointId, d.endpointId));
  // The activity's scheduled time is its input; the dispatcher's is the time it reserved attempt 1 (started_at).
  const at = scheduledAt || attempt!.startedAt.getTime();
  const since = (t: Date | null) => (t === null ? null : t.getTime() - at);
  const recordedAt = delivery!.updatedAt.getTime(); // the `now` of the attempt's write, shared by its endpoint writes
  const ids = (text: string) =>
    text
      .replaceAll(d.deliveryId, '<delivery>')
      .replaceAll(d.endpointId, '<endpoint>')
      .replaceAll(d.eventId, '<event>')
      .replace(/\d{4}-\d\d-\d\d[ T][\d:.+]+/g, '<time>');
  return {
    attempts: more.length + 1,
    attempt: {
      attemptNumber: attempt!.attemptNumber,
      succeeded: attempt!.succeeded,
      responseStatus: attempt!.responseStatus,
      errorKind: attempt!.errorKind,
      // The merchant's words, with the milliseconds and byte counts a timing decides left out.
      errorMessage: attempt!.errorMessage?.replace(/\d+ (ms|bytes)/g, 'N $1') ?? null,
      excerpt: attempt!.responseExcerpt?.replace(/^z+$/, 'z…') ?? null,
      retryAfterMs: attempt!.retryAfterMs,
      endpoint: attempt!.endpointId === d.endpointId,
    },
    delivery: {
      status: delivery!.status,
      attemptCount: delivery!.attemptCount,
      nextAttemptIn: since(delivery!.nextAttemptAt),
      delivered: delivery!.deliveredAt !== null,
      failed: delivery!.failedAt !== null,
      failureReason: delivery!.failureReason,
      handoffSince: delivery!.handoffSince,
    },
    endpoint: {
      status: endpoint!.status,
      disabledReason: endpoint!.disabledReason === null ? null : ids(endpoint!.disabledReason),
      disabledAt: endpoint!.disabledAt === null ? null : endpoint!.disabledAt.getTime() - recordedAt,
      failingSince: endpoint!.failingSince === null ? null : endpoint!.failingSince.getTime() === at ? 'scheduled' : 'earlier',
      consecutiveFailures: endpoint!.consecutiveFailures,
      backoffRatePerSecond: endpoint!.backoffRatePerSecond,
      backoffFor: endpoint!.backoffUntil === null ? null : endpoint!.backoffUntil.getTime() - recordedAt,
    },
    statusChanges: changes.map((s) => ({
      from: s.fromStatus,
      to: s.toStatus,
      reason: s.reason && ids(s.reason),
      actor: s.actor,
    })),
    metrics,
    logs: logged.map(({ time: _t, pid: _p, hostname: _h, latencyMs, ...rest }) => ({
      ...JSON.parse(ids(JSON.stringify(rest))),
      ...(latencyMs === undefined ? {} : { latencyMs: typeof latencyMs }),
    })),
  };
}

/** Runs `attempt` with this mode's log lines and metric deltas captured around it. */
async function captured<T>(attempt: () => Promise<T>) {
  const from = lines.length;
  const before = await counters();
  const result = await attempt();
  return { result, metrics: delta(before, await counters()), logged: lines.slice(from) };
}

/** (a) Per-delivery mode: the activity its workflow calls for attempt 1 (the workflow's input, workflow time). */
async function perDelivery(c: Case) {
  const d = await fresh(c, 'pd');
  const activities = createDeliveryActivities({ db: world.db, profile, logger, secretsKey: TEST_SECRETS_KEY });
  const scheduledAt = Date.now();
  const { result, metrics, logged } = await captured(() =>
    activities.attemptDelivery({ deliveryId: d.deliveryId, attemptNumber: 1, scheduledAt, retryInMs: FIRST_WAIT_MS }),
  );
  return { result, observed: await observe(d, scheduledAt, logged, metrics) };
}

/** (b) Batched mode: the dispatcher's first attempts of a delivery its fan-out handed it (handoff_since set). */
async function batched(c: Case) {
  const d = await fresh(c, 'b');
  await world.db.update(deliveries).set({ handoffSince: new Date() }).where(eq(deliveries.id, d.deliveryId));
  const deps = { db: world.db, temporal: world.temporal.client, profile, logger, handOffQueue: UNPOLLED };
  const { result, metrics, logged } = await captured(() => batchedFirstAttempt(deps, d));
  const observed = await observe(d, 0, logged, metrics);
  return { result, observed, workflow: await handedOff(d.deliveryId), scheduledAt: await firstStartedAt(d.deliveryId) };
}

const firstStartedAt = async (deliveryId: string) => (await attemptsOf(world.db, deliveryId))[0]!.startedAt.getTime();

/** The delivery workflow the dispatcher started for a delivery (its input), or null when it started none. */
async function handedOff(deliveryId: string): Promise<DeliveryWorkflowInput | null> {
  const handle = world.temporal.client.workflow.getHandle(deliveryId);
  const history = await handle.fetchHistory().catch(() => null);
  if (!history) return null;
  started.push(deliveryId);
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return defaultPayloadConverter.fromPayload(payload!) as DeliveryWorkflowInput;
}

/**
 * The intended difference, as what attempt 2 will be: the per-delivery workflow waits timerWait(schedule, retryInMs)
 * after the activity's answer (src/workflows/delivery.ts) unless it stops; the batched dispatcher starts a workflow
 * resuming from the row (priorAttempts 1, RETRYING at next_attempt_at or FAILED), and none for a DELIVERED one.
 */
function perDeliveryNext(result: AttemptResult) {
  if (result.outcome === 'delivered') return null;
  if (result.stopRetrying) return { priorAttempts: 1, status: 'FAILED', nextAttemptIn: null };
  return { priorAttempts: 1, status: 'RETRYING', nextAttemptIn: timerWait(FIRST_WAIT_MS, result.retryInMs) };
}
function batchedNext(workflow: DeliveryWorkflowInput | null, scheduledAt: number) {
  if (!workflow) return null;
  const resume = workflow.resume!;
  return {
    priorAttempts: workflow.priorAttempts,
    status: resume.status,
    nextAttemptIn: resume.nextAttemptAt === null ? null : resume.nextAttemptAt - scheduledAt,
  };
}

describe('issue 31: one attempt path — the same hostile merchant through both delivery modes', () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: the same rows, metrics and logs in per_delivery and batched mode',
    async (_name, c) => {
      const a = await perDelivery(c);
      const b = await batched(c);

      // What the answer must do at all (so that two equally wrong modes still fail).
      expect(a.observed.attempt).toMatchObject({ attemptNumber: 1, responseStatus: c.expect.status, errorKind: c.expect.kind });
      expect(a.observed.delivery).toMatchObject({ status: c.expect.delivery, attemptCount: 1, handoffSince: null });
      expect(a.observed.endpoint.status).toBe(c.expect.endpoint);
      if (c.expect.reason) expect(a.observed.endpoint.disabledReason).toMatch(c.expect.reason);
      expect(a.observed.metrics[`apipay_outbound_attempts_total{"outcome":"${c.expect.kind ?? 'success'}"}`]).toBe(1);
      expect(a.observed.logs.filter((l) => l.msg === 'delivery attempt')).toHaveLength(1);
      if (c.expect.endpoint === 'disabled') {
        expect(a.observed.statusChanges).toEqual([
          { from: 'enabled', to: 'disabled', reason: expect.any(String), actor: 'system' },
        ]);
        expect(a.observed.metrics['apipay_outbound_endpoint_status_changes_total{"to":"disabled","actor":"system"}']).toBe(1);
      }

      // The two modes: the same rows, metric deltas and log lines.
      expect(b.observed).toEqual(a.observed);

      // Intended: the activity answers the workflow that runs it; the dispatcher starts the workflow that goes on (on a
      // queue nobody polls here), from the same next attempt.
      expect(b.result).toEqual({
        delivered: c.expect.delivery === 'DELIVERED' ? 1 : 0,
        handedOff: c.expect.delivery === 'DELIVERED' ? 0 : 1,
      });
      expect(batchedNext(b.workflow, b.scheduledAt)).toEqual(perDeliveryNext(a.result));
      if (a.observed.delivery.nextAttemptIn !== null)
        expect(perDeliveryNext(a.result)?.nextAttemptIn).toBe(a.observed.delivery.nextAttemptIn);
    },
  );
});
