// npm run drill:outbound-kill — P2's kill drill for the batched delivery mode: N events through real Kafka → a
// dispatcher process (batched, with its hand-off sweep and delivery worker) → a local merchant, with a worker
// process beside it for the retries; both are killed with SIGKILL mid-burst (twice for the dispatcher) and
// restarted. Reports lost events (must be 0), POSTs, duplicates and what explains each: a first attempt the merchant
// answered 503 (every 10th event, so retries run through workflows across the kills) or an attempt recorded
// `interrupted` (the process died between its POST and the record). Exit 1 if anything is lost or unexplained.
// Usage: npm run drill:outbound-kill -- [--count 5000] [--concurrency 128]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { BOOTSTRAP_PRINCIPAL } from '../src/access/roles.js';
import { createDatabase } from '../src/db/client.js';
import { createKafkaAdmin, createProducer } from '../src/kafka/kafkajs.js';
import { WORKFLOWS_PATH } from '../src/temporal-workers/build.js';
import { createEndpointService } from '../src/outbound/endpoints.js';
import { ensureBenchDatabase } from './lib/bench-db.js';
import { loadAverage } from './lib/stages.js';

const { values: args } = parseArgs({
  options: { count: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '128' } },
});
const COUNT = Number(args.count);
const run = randomUUID().slice(0, 8);
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const database = createDatabase(await ensureBenchDatabase(), { max: 5 });
const secretsKey = randomBytes(32);

// The merchant: 503 for the first POST of every 10th event, 200 otherwise; counts POSTs per event id.
const posts = new Map<string, number>();
const failFirst = new Set<string>();
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const id = (JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id;
    posts.set(id, (posts.get(id) ?? 0) + 1);
    res.writeHead(failFirst.delete(id) ? 503 : 200).end('ok');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const merchant = `acct_drill_${run}`;
await createEndpointService({ db: database.db, secretsKey }).create(BOOTSTRAP_PRINCIPAL, {
  merchantAccount: merchant,
  url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
  eventTypes: ['*'],
  livemode: false,
});

const topic = `apipay.drill.outbound.${run}`;
const group = `drill-${run}`;
const taskQueue = `drill-outbound-${run}`;
const admin = createKafkaAdmin({ brokers, clientId: 'drill-outbound' });
await admin.createTopic(topic, 4);
const bundlePath = join(tmpdir(), `apipay-drill-bundle-${run}.js`);
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') })).code);
const profile = {
  delivery_mode: 'batched',
  retry_schedule: ['2s', '5s', '10s'], // retries inside the drill's time
  request_timeout: '5s',
  batched: { concurrency: Number(args.concurrency), sweep_interval: '2s', handoff_grace: '8s' },
};
const env = {
  ...process.env,
  BENCH_SECRETS_KEY: secretsKey.toString('base64'),
  BENCH_PROFILE: JSON.stringify(profile),
  BENCH_WORKFLOW_BUNDLE: bundlePath,
};
const REPLICA = fileURLToPath(new URL('./lib/outbound-replica.ts', import.meta.url));
const children = new Set<ChildProcess>();
async function replica(...replicaArgs: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', REPLICA, ...replicaArgs], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`drill ${replicaArgs[0]} exited with ${code}`)));
  });
  return child;
}
const waitUntil = async (what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 600_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};
const loadBefore = loadAverage();
const started = performance.now();
const kills: string[] = [];
const ids = Array.from({ length: COUNT }, (_, i) => `evt_drill_${run}_${i}`);
ids.forEach((id, i) => i % 10 === 0 && failFirst.add(id));
let lost: number;
try {
  let worker = await replica('worker', taskQueue);
  let dispatcher = await replica('dispatcher', topic, group, taskQueue);
  const producer = await createProducer({ brokers, clientId: 'drill-producer' });
  for (let i = 0; i < COUNT; i += 500) {
    await producer.send(
      topic,
      ids.slice(i, i + 500).map((id, j) => ({
        key: String(i + j),
        value: JSON.stringify({
          id,
          object: 'event',
          type: 'payment.succeeded',
          created: Math.floor(Date.now() / 1000),
          livemode: false,
          merchant_account: merchant,
          data: { object: { id: `pay_${i + j}`, object: 'payment' } },
        }),
      })),
    );
  }
  await producer.close();
  const kill = async (name: 'dispatcher' | 'worker', child: ChildProcess, at: number) => {
    await waitUntil(`${at} events received`, () => posts.size >= at);
    child.kill('SIGKILL');
    kills.push(`${name} at ${posts.size} received`);
    return name === 'dispatcher' ? replica('dispatcher', topic, group, taskQueue) : replica('worker', taskQueue);
  };
  [dispatcher, worker] = await Promise.all([
    kill('dispatcher', dispatcher, Math.floor(COUNT * 0.3)),
    kill('worker', worker, Math.floor(COUNT * 0.3)),
  ]);
  dispatcher = await kill('dispatcher', dispatcher, Math.floor(COUNT * 0.6));
  const settled = async () => {
    const [row] = await database.sql<
      { n: number }[]
    >`select count(*)::int as n from deliveries where merchant_account = ${merchant} and status = 'DELIVERED' and handoff_since is null`;
    return row!.n === COUNT;
  };
  await waitUntil('every delivery DELIVERED and handed off', settled);
  lost = ids.filter((id) => !posts.has(id)).length;
} finally {
  for (const child of children) child.kill('SIGTERM');
  await admin.close();
  server.close();
}
const [attempts] = await database.sql<
  { total: number; interrupted: number; failed_first: number; in_flight: number; max_per_number: number }[]
>`
  select count(*)::int as total,
         count(*) filter (where a.error_kind = 'interrupted')::int as interrupted,
         count(*) filter (where a.response_status = 503)::int as failed_first,
         count(*) filter (where a.error_kind = 'in_flight')::int as in_flight,
         1 as max_per_number -- (delivery_id, attempt_number) is unique: one row, at most one POST, per attempt number
    from delivery_attempts a join deliveries d on d.id = a.delivery_id where d.merchant_account = ${merchant}`;
const totalPosts = [...posts.values()].reduce((a, b) => a + b, 0);
const duplicates = totalPosts - posts.size;
const unexplained = Math.max(0, duplicates - attempts!.failed_first - attempts!.interrupted);
console.log(
  `drill:outbound-kill (batched, concurrency ${args.concurrency}; load average ${loadBefore} before, ${loadAverage()} after)`,
);
console.log(
  `  events    ${COUNT} produced; kills: ${kills.join(', ')}; settled in ${((performance.now() - started) / 1000).toFixed(0)} s`,
);
console.log(`  lost      ${lost} (events the merchant never received)`);
console.log(`  posts     ${totalPosts} for ${posts.size} events: ${duplicates} beyond one per event`);
console.log(
  `  explained ${attempts!.failed_first} first attempts answered 503 (then retried by a workflow), ${attempts!.interrupted} attempts recorded interrupted (killed between POST and record); unexplained ${unexplained}`,
);
console.log(
  `  attempts  ${attempts!.total} rows, ${attempts!.in_flight} left in flight; POSTs ≤ attempt rows: ${totalPosts <= attempts!.total}`,
);
await database.close();
process.exit(lost === 0 && unexplained === 0 && attempts!.in_flight === 0 && totalPosts <= attempts!.total ? 0 : 1);
