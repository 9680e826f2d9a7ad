// Issue 33 item 2 (P13): the cost of a sleeping delivery, and of the parked alternative, side by side in one run.
// Retrying: --count deliveries whose attempt 1 failed (RETRYING rows with their failed attempt, as the batched
// dispatcher leaves them) each get their deliveryWorkflow, resumed into one durable timer due at the same instant
// T. Measured: the start rate; the bytes per delivery in Temporal's store (the dev server's SQLite, per table) and in
// PostgreSQL; the worker's RSS with them all asleep; and at T (the merchant answering 200 from then on) the time until
// every timer fired and its attempt was recorded DELIVERED. Parked: as many deliveries parked at fan-out (P13) for a
// second endpoint: the bytes per delivery (PostgreSQL only; one probe workflow for all) and the time the probe takes to
// release them all with the ramp off (its allowance per release_tick the only limit); with --parked-during-fire that
// release begins at T beside the retrying side's fire (P18's case). Ends with `RESULT {json}`.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { BOOTSTRAP_PRINCIPAL } from '../../src/access/roles.js';
import { loadProfile } from '../../src/config/profile.js';
import { createDatabase } from '../../src/db/client.js';
import { createEndpointService } from '../../src/outbound/endpoints.js';
import { startDeliveryWorkflows, type DeliveryToStart } from '../../src/outbound/delivery-start.js';
import { createProbeStarter } from '../../src/outbound/probe-start.js';
import { newId } from '../../src/shared/ids.js';
import { quietTemporalRuntime } from './baseline.js';
import { ensureBenchDatabase, removeBenchRows } from './bench-db.js';
import { loadAverage, type Figure } from './runs.js';
import { pidCpuMs, pidRssMb } from './stack-cpu.js';
import { growth, temporalStoreBytes } from './temporal-store.js';
import { startWorkerProcess } from './worker-process.js';

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    'start-concurrency': { type: 'string', default: '32' },
    // The rate the due time T assumes the worker puts workflows to sleep at (T = N / this), and the fire's cap.
    'asleep-per-second': { type: 'string', default: '20' },
    'fire-cap-minutes': { type: 'string', default: '30' },
    // The parked side alone (its cost does not depend on the retrying side's, which at 100,000 takes two hours).
    'parked-only': { type: 'boolean', default: false },
    // The parked side released *while* the retrying side's timers fire (P18: the probe on its own task queue), both
    // from T; the parked rows are written before the retrying starts. Without it the two sides run one after the other.
    'parked-during-fire': { type: 'boolean', default: false },
    // Leave the run's deliveries, events and endpoints in the bench database (by default they are removed at its end).
    'keep-rows': { type: 'boolean', default: false },
    'run-index': { type: 'string' },
  },
});
const N = Number(args.count);
const loadBefore = loadAverage();
quietTemporalRuntime();
process.env.SANDBOX_STRIPE_WEBHOOK_SECRET ??= 'whsec_bench_unused';
process.env.SANDBOX_HMAC_WEBHOOK_SECRET ??= 'bench-unused';
const profile = loadProfile(process.env.APIPAY_PROFILE ?? 'config/example.yaml');
profile.outbound.allow_insecure_urls = true;
profile.outbound.delivery_mode = 'batched';
profile.outbound.retry_schedule = [60_000, 3_600_000, 3_600_000];
// The parked side's release unthrottled but for the per-tick maximum: how fast a backlog can leave, not how fast P12 lets it.
profile.outbound.recovery = { ...profile.outbound.recovery, ramp: false, jitter: 0 };
profile.outbound.circuit = { ...profile.outbound.circuit, release_tick: 100 };
const database = createDatabase(await ensureBenchDatabase(), { max: 10 });
const { sql } = database;
const run = randomUUID().slice(0, 8);
const taskQueue = `bench-sleeping-${run}`;
const secretsKey = randomBytes(32);

// --- the merchant: 503 until `up`, then 200 ---------------------------------------------------------------------
let up = false;
let posts = 0;
const server = createServer((req, res) => {
  req.resume().on('end', () => {
    posts++;
    res.writeHead(up ? 200 : 503).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const endpoints = createEndpointService({ db: database.db, secretsKey });
const merchant = `acct_sleep_${run}`;
const retrying = (
  await endpoints.create(BOOTSTRAP_PRINCIPAL, {
    merchantAccount: merchant,
    url: `${url}/retrying`,
    eventTypes: ['*'],
    livemode: false,
  })
).endpoint.id;
const parked = (
  await endpoints.create(BOOTSTRAP_PRINCIPAL, {
    merchantAccount: merchant,
    url: `${url}/parked`,
    eventTypes: ['*'],
    livemode: false,
  })
).endpoint.id;

const pgBytes = async () => {
  const [row] = await sql<{ bytes: string }[]>`
    select sum(pg_total_relation_size(c))::text as bytes from unnest(array['events', 'deliveries', 'delivery_attempts']::regclass[]) as c`;
  return Number(row!.bytes);
};
const body = (id: string) =>
  Buffer.from(
    JSON.stringify({
      id,
      object: 'event',
      type: 'payment.failed',
      created: 1_796_000_000,
      livemode: false,
      data: {
        object: {
          id: `pay_${id.slice(4)}`,
          object: 'payment',
          amount: 12_345,
          currency: 'EUR',
          status: 'failed',
          reference: `ORD-${id.slice(-10)}`,
          failure_code: 'card_declined',
          metadata: { order: id.slice(-8) },
        },
      },
    }),
  );

/** N events and their deliveries to `endpointId` (as the fan-out writes them), in statements of 5,000. */
async function insertDeliveries(endpointId: string, kind: 'retrying' | 'parked', dueAt: Date): Promise<DeliveryToStart[]> {
  const out: DeliveryToStart[] = [];
  for (let from = 0; from < N; from += 5000) {
    const n = Math.min(5000, N - from);
    const evts = Array.from({ length: n }, () => `evt_${randomUUID().replaceAll('-', '')}`);
    const ids = evts.map(() => newId('whd'));
    await sql`insert into events (event_public_id, merchant_account, type, livemode, created_unix, body)
              select e, ${merchant}, 'payment.failed', false, 1796000000, convert_to(b, 'UTF8') from unnest(${evts}::text[], ${evts.map((e) => body(e).toString())}::text[]) as t(e, b)`;
    if (kind === 'parked')
      await sql`insert into deliveries (id, event_public_id, endpoint_id, merchant_account, parked_since)
                select d, e, ${endpointId}, ${merchant}, clock_timestamp() from unnest(${ids}::text[], ${evts}::text[]) as t(d, e)`;
    else {
      await sql`insert into deliveries (id, event_public_id, endpoint_id, merchant_account, status, attempt_count, next_attempt_at)
                select d, e, ${endpointId}, ${merchant}, 'RETRYING', 1, ${dueAt.toISOString()}::timestamptz from unnest(${ids}::text[], ${evts}::text[]) as t(d, e)`;
      await sql`insert into delivery_attempts (delivery_id, attempt_number, started_at, response_status, latency_ms, succeeded, error_kind, error_message, response_excerpt, endpoint_id)
                select d, 1, clock_timestamp(), 503, 3, false, 'http_status', 'HTTP 503', 'Service Unavailable', ${endpointId} from unnest(${ids}::text[]) as t(d)`;
    }
    ids.forEach((deliveryId) =>
      out.push({
        deliveryId,
        endpointId,
        merchantAccount: merchant,
        eventType: 'payment.failed',
        priorAttempts: 1,
        resume: { status: 'RETRYING', nextAttemptAt: dueAt.getTime() },
      }),
    );
  }
  return out;
}
const countWhere = async (endpointId: string, status: string) =>
  Number(
    (
      await sql<
        { n: string }[]
      >`select count(*)::text as n from deliveries where endpoint_id = ${endpointId} and status = ${status}::delivery_status`
    )[0]!.n,
  );
const rssMb = pidRssMb;
const cpuMs = (pid: number | undefined) => pidCpuMs(pid);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- the shipped worker in its own process ------------------------------------------------------------------------
const worker = await startWorkerProcess({ run, taskQueue, secretsKey, profile });
const native = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection: native });
const figures: Figure[] = [];
const lines: string[] = [];
const fig = (name: string, value: number, unit: string) => figures.push({ name, value: Math.round(value * 10) / 10, unit });

const DURING_FIRE = args['parked-during-fire'] && !args['parked-only'];
try {
  if (DURING_FIRE) {
    await insertParked();
    await retryingSide(() => releaseParked());
  } else {
    if (!args['parked-only']) await retryingSide();
    await insertParked();
    await releaseParked();
  }
} finally {
  worker.kill('SIGTERM');
  server.close();
}

/** Retrying: one workflow and one timer each, all due at T (with `atDue`, the parked side's release begins then too). */
async function retryingSide(atDue?: () => Promise<void>) {
  const rssIdle = rssMb(worker.pid!);
  const store0 = temporalStoreBytes();
  const pg0 = await pgBytes();
  // Due together after the starts and the worker's first tasks (~30/s here: 20/s leaves room), reported against the
  // real rates. At 100,000 that is 83 min of waiting before the fire (the 7 Dec run at N/30 s fired mid-way: killed).
  const due = new Date(Date.now() + Math.max(60_000, (N / Number(args['asleep-per-second'])) * 1000));
  const toStart = await insertDeliveries(retrying, 'retrying', due);
  const pg1 = await pgBytes();
  const startedAt = Date.now();
  await startDeliveryWorkflows({ temporal, taskQueue, profile, concurrency: Number(args['start-concurrency']) }, toStart);
  const startS = (Date.now() - startedAt) / 1000;
  // Asleep only once the worker has run every first workflow task (the start check, then the timer): at 100,000 the
  // starts (~140/s) ran far ahead of it (~30/s), and a reading 5 s after them was of half-written histories.
  let asleepAfterS = 0;
  for (let busy = Infinity; busy > 250 && Date.now() < due.getTime() - 30_000;) {
    const c0 = cpuMs(worker.pid!);
    await sleep(5000);
    busy = cpuMs(worker.pid!) - c0; // worker CPU ms over the 5 s
    asleepAfterS += 5;
  }
  const store1 = temporalStoreBytes();
  const rssAsleep = rssMb(worker.pid!);
  const leftS = (due.getTime() - Date.now()) / 1000;
  fig('retrying: workflow starts/s', N / startS, '/s');
  fig('retrying: PostgreSQL bytes per delivery (event, delivery, attempt 1)', (pg1 - pg0) / N, 'B');
  if (store0 && store1) {
    fig('retrying: Temporal store payload bytes per delivery', (store1.totalPayload - store0.totalPayload) / N, 'B');
    fig('retrying: Temporal store page bytes per delivery', (store1.totalPages - store0.totalPages) / N, 'B');
    lines.push(
      `store     per retrying delivery, by table: ${growth(store0, store1)
        .slice(0, 10)
        .map(([t, b]) => `${t} ${Math.round(b / N)} B`)
        .join(', ')}`,
    );
  }
  fig('retrying: worker RSS idle', rssIdle, 'MB');
  fig('retrying: worker RSS with all asleep', rssAsleep, 'MB');
  lines.push(
    `retrying  ${N} started in ${startS.toFixed(1)} s (${(N / startS).toFixed(0)}/s); the worker idle (all asleep) ${asleepAfterS} s after; all due at once ${leftS.toFixed(0)} s later${leftS < 30 ? ' — NOT all asleep well before T: the figures below are mixed with starting' : ''}`,
  );

  // At T the merchant answers 200: the timers fire together; time until every one is DELIVERED.
  await sleep(Math.max(0, due.getTime() - Date.now() - 1000));
  up = true;
  const releasing = atDue?.();
  const cpu0 = cpuMs(worker.pid!);
  let peakRss = 0;
  let fired: number;
  const capMs = Number(args['fire-cap-minutes']) * 60_000;
  while ((fired = await countWhere(retrying, 'DELIVERED')) < N && Date.now() < due.getTime() + capMs) {
    peakRss = Math.max(peakRss, rssMb(worker.pid!));
    await sleep(500);
  }
  const fireS = (Date.now() - due.getTime()) / 1000;
  // At the cap (--fire-cap-minutes) not all have fired: the rate is of those that did (the 50,000 run of 7 Dec hit it).
  fig('retrying: DELIVERED after T within the cap', fired, 'deliveries');
  fig('retrying: all fired and DELIVERED after T', fireS, 's');
  fig('retrying: timers handled/s', fired / fireS, '/s');
  const withRelease = atDue ? ' (the parked release beside it counted in)' : '';
  fig(`retrying: worker CPU per delivery when due${withRelease}`, (cpuMs(worker.pid!) - cpu0) / Math.max(1, fired), 'ms');
  fig('retrying: worker RSS peak when due', peakRss, 'MB');
  await releasing;
}

/** Parked: a row each (their bytes in PostgreSQL). */
async function insertParked() {
  if (!DURING_FIRE) up = false;
  const pg2 = await pgBytes();
  await insertDeliveries(parked, 'parked', new Date());
  const pg3 = await pgBytes();
  fig('parked: PostgreSQL bytes per delivery (event, delivery)', (pg3 - pg2) / N, 'B');
}

/** Parked: released by one probe workflow (P18: on its own task queue), alone or beside the retrying side's fire. */
async function releaseParked() {
  const store2 = temporalStoreBytes();
  up = true;
  const releasedFrom = Date.now();
  const cpu1 = cpuMs(worker.pid!);
  await createProbeStarter(temporal, taskQueue, profile, 0).ensure([parked]);
  let releasedN: number;
  let firstAt: number | null = null; // the first parked delivery DELIVERED: how long the probe waited to begin
  while ((releasedN = await countWhere(parked, 'DELIVERED')) < N && Date.now() < releasedFrom + 30 * 60_000) {
    if (releasedN > 0) firstAt ??= Date.now();
    await sleep(500);
  }
  firstAt ??= Date.now();
  const releaseS = (Date.now() - releasedFrom) / 1000;
  const store3 = temporalStoreBytes();
  const during = DURING_FIRE ? ' during the fire' : '';
  fig(`parked: first released and DELIVERED after${during}`, (firstAt - releasedFrom) / 1000, 's');
  // Beside the fire the store's growth and the worker's CPU are the retrying side's too: not the parked side's figures.
  if (store2 && store3 && !DURING_FIRE)
    fig(
      'parked: Temporal store payload bytes per delivery (one probe for all)',
      (store3.totalPayload - store2.totalPayload) / N,
      'B',
    );
  // At the 30-minute cap not all were released (at 100,000 the probe waited behind the fire): the count, not N.
  fig(`parked: released and DELIVERED within the cap${during}`, releasedN, 'deliveries');
  fig(`parked: all released and DELIVERED after${during}`, releaseS, 's');
  fig(`parked: released/s${during}`, releasedN / releaseS, '/s');
  if (!DURING_FIRE) fig('parked: worker CPU per delivery released', (cpuMs(worker.pid!) - cpu1) / Math.max(1, releasedN), 'ms');
  const retryingDone = DURING_FIRE ? `; retrying DELIVERED meanwhile ${await countWhere(retrying, 'DELIVERED')}` : '';
  lines.push(
    `parked    ${N} parked; ${releasedN} released and delivered in ${releaseS.toFixed(1)} s (${(releasedN / releaseS).toFixed(0)}/s${during}) by one probe workflow, the first after ${((firstAt - releasedFrom) / 1000).toFixed(1)} s${retryingDone}; merchant saw ${posts} POSTs in all`,
  );
}
const sides = args['parked-only']
  ? `${N} parked only`
  : `${N} retrying deliveries in one timer each, and ${N} parked${DURING_FIRE ? ', released from the same T as the retrying fire' : ''}`;
console.log(`bench:sleeping (${sides}; load average ${loadBefore} before, ${loadAverage()} after)`);
for (const f of figures) console.log(`  ${f.name}: ${f.value} ${f.unit}`);
for (const line of lines) console.log(`  ${line}`);
console.log(`RESULT ${JSON.stringify({ figures, phases: [], loadBefore, loadAfter: loadAverage() })}`);
await native.close().catch(() => {});
// The run's rows out of the bench database (2 × --count deliveries); the retrying workflows past the fire cap stay
// open in Temporal, on a task queue no worker polls again.
if (!args['keep-rows'])
  await removeBenchRows(sql, [retrying, parked], [merchant]).catch((error: Error) =>
    console.warn(`removing the run's rows failed: ${error.message}`),
  );
await database.close();
process.exit(0);
