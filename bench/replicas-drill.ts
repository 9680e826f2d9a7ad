// `npm run drill:replicas -- [--seconds 90] [--webhook-rate 10] [--event-rate 5] [--port-base 25700]` (P6): two of
// each app process (api, worker, dispatcher) on one stack of its own (PostgreSQL, Temporal, Kafka on their own
// ports, as the soak's), the APIs behind a round-robin balancer; signed webhooks and Kafka events flow while, half
// way through, one of each is killed with SIGKILL and not restarted. Then the soak's end-state checks: every
// acknowledged webhook reconciled once (one ledger transaction per provider object), every event delivered, no
// attempt number twice. Exit 1 if one fails.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { createDatabase } from '../src/db/client.js';
import { startReplicas, startRoundRobin, type Replica } from './lib/replicas.js';
import type { AppName } from './soak/apps.js';
import { startInboundTraffic } from './soak/inbound.js';
import { inboundChecks, ledgerChecks, outboundChecks, type Check, type Fault } from './soak/invariants.js';
import { startMerchants } from './soak/merchants.js';
import { registerEndpoints, startOutboundTraffic } from './soak/outbound.js';
import { soakSecrets, writeSoakProfile } from './soak/profile.js';
import { seeded } from './soak/random.js';
import { ROOT, soakPorts, soakStack, wipeSoakData } from './soak/stack.js';
import { waitReady, waitSettled } from './soak/wait.js';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '90' },
    'webhook-rate': { type: 'string', default: '10' },
    'event-rate': { type: 'string', default: '5' },
    'settle-minutes': { type: 'string', default: '5' },
    'port-base': { type: 'string', default: '25700' },
    seed: { type: 'string', default: '6' },
  },
});
const say = (line: string) => console.log(`[replicas] ${line}`);
const seconds = Number(values.seconds);
const base = Number(values['port-base']);
const ports = soakPorts(base);
const stack = soakStack(ports);
wipeSoakData(stack);
say(`stack: PostgreSQL ${ports.pg}, Temporal ${ports.temporal}, Kafka ${ports.kafka}; data ${stack.data}`);
await stack.up();

const secrets = soakSecrets();
Object.assign(process.env, secrets);
const { path: profilePath, profile } = writeSoakProfile(stack.data, ports.sandbox);
await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'src/db/migrate.ts'), stack.databaseUrl], {
  cwd: ROOT,
});

const random = seeded(Number(values.seed));
const merchants = await startMerchants({ port: ports.merchants, random, slowMs: 3_000 });
// Two of each: the first on the soak's ports, the second on the ports after them; the balancer on the API port.
const replicas: Replica[] = [
  { app: 'api', index: 1, port: base + 11 },
  { app: 'api', index: 2, port: base + 12 },
  { app: 'worker', index: 1, port: ports.workerMetrics },
  { app: 'worker', index: 2, port: base + 13 },
  { app: 'dispatcher', index: 1, port: ports.dispatcherMetrics },
  { app: 'dispatcher', index: 2, port: base + 14 },
];
const set = startReplicas({
  logs: join(stack.data, 'logs'),
  replicas,
  env: {
    ...secrets,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    APIPAY_PROFILE: profilePath,
    DATABASE_URL: stack.databaseUrl,
    DATABASE_POOL_MAX: '8',
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    KAFKA_BROKERS: `127.0.0.1:${ports.kafka}`,
    API_HOST: '127.0.0.1',
  },
});
const balancer = await startRoundRobin(ports.api, [base + 11, base + 12]);
const apiUrl = `http://127.0.0.1:${ports.api}`;
const database = createDatabase(stack.databaseUrl, { max: 2 });
let exitCode = 1;
try {
  for (const r of replicas) await waitReady(`http://127.0.0.1:${r.port}/readyz`, 240_000);
  const merchant = `acct_replicas_${values.seed}`;
  const endpoints = await registerEndpoints({ apiUrl, adminToken: secrets.ADMIN_TOKEN, merchantsUrl: merchants.url, merchant });
  say(`six processes ready; endpoints ${endpoints.map((e) => e.path).join(', ')}`);
  const seed = Number(values.seed);
  const inbound = await startInboundTraffic({
    profile,
    port: ports.sandbox,
    ingressUrl: apiUrl,
    ratePerS: Number(values['webhook-rate']),
    random,
    seed,
    providerAnswering: true,
  });
  const outbound = await startOutboundTraffic({
    brokers: [`127.0.0.1:${ports.kafka}`],
    topic: profile.outbound.kafka.topic,
    merchant,
    ratePerS: Number(values['event-rate']),
    random,
    seed,
    nulPoison: false,
  });
  const started = Date.now();
  const faults: Fault[] = [];
  await new Promise((r) => setTimeout(r, (seconds * 1000) / 2));
  for (const app of ['api', 'worker', 'dispatcher'] as AppName[]) {
    say(`${((Date.now() - started) / 1000).toFixed(0)}s SIGKILL ${app}#1 (not restarted)`);
    faults.push({ target: app, at: Date.now() });
    set.kill(app, 1);
    await new Promise((r) => setTimeout(r, 2_000));
  }
  await new Promise((r) => setTimeout(r, Math.max(0, started + seconds * 1000 - Date.now())));
  say('traffic stopping (resending what was not acknowledged)');
  await Promise.all([inbound.stop(), outbound.stop()]);
  say(
    `traffic stopped: ${inbound.acked.length}/${inbound.sent} webhooks acknowledged, ${outbound.acked.length}/${outbound.sent} events acknowledged by Kafka; settling`,
  );
  const settled = await waitSettled(database.sql, inbound.acked, outbound.acked, Number(values['settle-minutes']) * 60_000);
  say(`settle: ${settled}`);
  await set.stop();
  const checks: Check[] = [
    ...(await inboundChecks(database.sql, inbound.acked)),
    ...(await ledgerChecks(database.sql)),
    ...(await outboundChecks(database.sql, outbound.acked, endpoints, merchants.posts, faults)),
    {
      name: 'no replica died unplanned',
      ok: set.unplannedExits().length === 0,
      detail: set.unplannedExits().join('; ') || 'none',
    },
  ];
  say(`balancer: ${[...balancer.forwarded].map(([port, n]) => `:${port} ${n}`).join(', ')} requests answered`);
  for (const check of checks) say(`${check.ok ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail}`);
  exitCode = checks.every((c) => c.ok) ? 0 : 1;
  say(exitCode === 0 ? 'every invariant held' : `FAILED; logs in ${join(stack.data, 'logs')}`);
  await inbound.sandbox.close();
} catch (error) {
  say(`FAILED: ${(error as Error).stack ?? error}`);
} finally {
  await set.stop();
  balancer.close();
  await merchants.close();
  await database.close();
  await stack.down();
}
process.exit(exitCode);
