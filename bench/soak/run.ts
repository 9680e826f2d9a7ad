// `npm run soak -- --minutes M --seed S` (R11): a seeded fault-injection soak on its own stack. Mixed inbound and
// outbound traffic while one of api, worker, dispatcher, Kafka, PostgreSQL or Temporal is killed every 30 s, and (M11)
// the RabbitMQ broker of the merchant's queue endpoint at 45 s and every 60 s after; then a
// settle period and the end-state invariants (bench/soak/invariants.ts), the transition-path check (R15) and the
// stack's health checks (R16) among them. `--seeds a,b,c` runs one soak per seed in turn, each on a fresh stack with
// its own report (R16). Exit 1 if an invariant failed in any run. docs/reliability.md.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDatabase } from '../../src/db/client.js';
import { findTransitionPathViolations } from '../../src/inbound/transition-path-audit.js';
import { checkLedger } from '../../src/ledger/check.js';
import { superviseApps, type AppSupervisor } from './apps.js';
import { portFree } from './ports.js';
import { parseSoakArgs, SKIPPABLE } from './args.js';
import { runKillSchedule } from './faults.js';
import { registerBrokerEndpoint, startBrokerConsumer, type BrokerConsumer } from './broker.js';
import { brokerChecks } from './broker-invariants.js';
import { startInboundTraffic } from './inbound.js';
import { inboundChecks, ledgerChecks, outboundChecks, quarantineChecks, type Check } from './invariants.js';
import { startMerchants } from './merchants.js';
import { registerEndpoints, startOutboundTraffic } from './outbound.js';
import { soakSecrets, writeSoakProfile } from './profile.js';
import { brokerKills, killSchedule, seeded } from './random.js';
import { rabbitmqInstalled, ROOT, soakPorts, soakStack, wipeSoakData, type SoakStack } from './stack.js';
import { waitReady, waitSettled } from './wait.js';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const say = (line: string) => console.log(`[soak] ${line}`);
const args = parseSoakArgs(process.argv.slice(2));
/** The run in progress, for the signal handlers. */
const current: { apps?: AppSupervisor; stack?: SoakStack } = {};
// Ctrl-C or a kill of the runner takes its apps and its stack along (they would otherwise outlive it).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping the apps and the soak stack`);
    void (current.apps?.stop() ?? Promise.resolve())
      .then(() => current.stack?.down())
      .finally(() => process.exit(130));
  });
}

/** One soak with one seed on a fresh stack: its report, and 0 when every invariant held. */
async function soakOnce(seed: number): Promise<number> {
  const kills = killSchedule(seed, args.minutes);
  say(`seed ${seed}, ${args.minutes} min, ${args.webhookRate} webhooks/s, ${args.eventRate} events/s, settle ≤ ${args.settleMinutes} min, outbound ${args.batched ? 'batched' : 'per delivery'}`);
  say(`kill schedule (seed ${seed}): ${kills.map((k) => `${k.atS}s ${k.target}${k.downS && !['api', 'worker', 'dispatcher'].includes(k.target) ? `(${k.downS}s down)` : ''}`).join(', ') || 'none'}`);
  if (args.skip.size) say(`left out (open defects): ${[...args.skip].map((s) => SKIPPABLE[s]).join('; ')}`);

  const ports = soakPorts(args.portBase);
  // The apps' ports must be free: an app left by an earlier soak (its runner killed) would answer in their place.
  for (const [name, port] of Object.entries({ api: ports.api, workerMetrics: ports.workerMetrics, dispatcherMetrics: ports.dispatcherMetrics, sandbox: ports.sandbox, merchants: ports.merchants })) {
    if (!(await portFree(port))) {
      say(`FAILED: port ${port} (${name}) is already in use — another soak on --port-base ${args.portBase}, or its leftover processes; stop them or pick another --port-base`);
      return 2;
    }
  }
  const stack = soakStack(ports, { broker: args.broker });
  current.stack = stack;
  wipeSoakData(stack);
  say(`stack: PostgreSQL ${ports.pg}, Temporal ${ports.temporal}, Kafka ${ports.kafka}, RabbitMQ ${ports.rabbitmq}, API ${ports.api}; data ${stack.data}`);
  const startedUp = Date.now();
  await stack.up();
  say(`stack up in ${((Date.now() - startedUp) / 1000).toFixed(0)}s`);
  // M11: the merchant's RabbitMQ queue and the broker's kills, when the stack could run one.
  const broker = args.broker && rabbitmqInstalled();
  const killsOfBroker = broker ? brokerKills(seed, args.minutes) : [];
  say(broker
    ? `broker kill schedule (seed ${seed}): ${killsOfBroker.map((k) => `${k.atS}s rabbitmq(${k.downS}s down)`).join(', ') || 'none'}`
    : `no broker destination: ${args.broker ? 'rabbitmq-server is not installed (scripts/stack/rabbitmq.sh)' : '--no-broker'}`);

  const secrets = soakSecrets();
  Object.assign(process.env, secrets);
  const { path: profilePath, profile } = writeSoakProfile(stack.data, ports.sandbox, args.batched);
  await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'src/db/migrate.ts'), stack.databaseUrl], { cwd: ROOT });

  const random = seeded(seed);
  const merchants = await startMerchants({ port: ports.merchants, random, slowMs: 3_000 });
  const apiUrl = `http://127.0.0.1:${ports.api}`;
  const apps = superviseApps({
    logs: join(stack.data, 'logs'),
    env: {
      ...secrets,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      APIPAY_PROFILE: profilePath,
      DATABASE_URL: stack.databaseUrl,
      DATABASE_POOL_MAX: '10',
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      TEMPORAL_UI_URL: `http://127.0.0.1:${ports.temporalUi}`,
      KAFKA_BROKERS: `127.0.0.1:${ports.kafka}`,
      API_HOST: '127.0.0.1',
      API_PORT: String(ports.api),
      WORKER_METRICS_PORT: String(ports.workerMetrics),
      DISPATCHER_METRICS_PORT: String(ports.dispatcherMetrics),
    },
  });
  current.apps = apps;
  const database = createDatabase(stack.databaseUrl, { max: 2 });
  let exitCode = 1;
  let sandbox: { close(): Promise<void> } | undefined;
  let consumer: BrokerConsumer | undefined;
  try {
    apps.start();
    await waitReady(`${apiUrl}/readyz`, 180_000);
    const merchant = `acct_soak_${seed}`;
    const endpoints = await registerEndpoints({ apiUrl, adminToken: secrets.ADMIN_TOKEN, merchantsUrl: merchants.url, merchant });
    consumer = broker ? await startBrokerConsumer(ports.rabbitmq) : undefined; // declares the queue first
    const queue = broker ? await registerBrokerEndpoint({ apiUrl, adminToken: secrets.ADMIN_TOKEN, merchant, port: ports.rabbitmq }) : undefined;
    if (queue) endpoints.push(queue);
    say(`apps ready; endpoints ${endpoints.map((e) => e.path).join(', ')}`);

    const inbound = await startInboundTraffic({ profile, port: ports.sandbox, ingressUrl: apiUrl, ratePerS: args.webhookRate, random, seed });
    sandbox = inbound.sandbox;
    const outbound = await startOutboundTraffic({
      brokers: [`127.0.0.1:${ports.kafka}`], topic: profile.outbound.kafka.topic, merchant, ratePerS: args.eventRate, random, seed,
      nulPoison: !args.skip.has('R1'),
    });
    const faults = runKillSchedule({ kills: [...kills, ...killsOfBroker].sort((a, b) => a.atS - b.atS), apps, stack, say });
    await new Promise((r) => setTimeout(r, args.minutes * 60_000));
    await faults.stop();
    say('traffic stopping (resending what was not acknowledged)');
    await Promise.all([inbound.stop(), outbound.stop()]);
    say(`traffic stopped: ${inbound.acked.length}/${inbound.sent} webhooks acknowledged, ${outbound.acked.length} events and ${outbound.poisonAcked} poison messages acknowledged by Kafka (${outbound.sent} sent); settling`);
    const settled = await waitSettled(database.sql, inbound.acked, outbound.acked, args.settleMinutes * 60_000);
    say(`settle: ${settled}`);
    await apps.stop(); // nothing moves while the checks read
    await new Promise((r) => setTimeout(r, consumer ? 2_000 : 0)); // the consumer takes what the queue still holds
    await consumer?.close();

    // L6: the same check as `apipay ledger check` (balanced, within what the provider settled, objects once, export = ledger).
    const ledgerCheckLine = async (): Promise<Check> => {
      const result = await checkLedger(database.db);
      const kinds = [...new Set(result.violations.map((v) => v.kind))];
      return { name: 'apipay ledger check (L6)', ok: result.ok, detail: result.ok ? 'no violation' : `${result.violations.length} violations: ${kinds.join(', ')}` };
    };
    // R15: every reconciliation's transitions, read in recorded order, are a path of the state machine (I7).
    const transitionPathCheck = async (): Promise<Check> => {
      const violations = await findTransitionPathViolations(database.sql);
      const ids = new Set(violations.map((v) => v.reconciliationId));
      return {
        name: "every reconciliation's transitions are a path of the state machine (R15, I7)",
        ok: violations.length === 0,
        detail: violations.length === 0
          ? 'no violation'
          : `${ids.size} reconciliations, ${violations.length} violations (e.g. ${violations.slice(0, 3).map((v) => `${v.reconciliationId}: ${v.message}`).join('; ')})`,
      };
    };
    const health = await stack.health();
    const checks: Check[] = [
      ...(await inboundChecks(database.sql, inbound.acked)),
      ...(await ledgerChecks(database.sql)),
      await ledgerCheckLine(),
      ...(await outboundChecks(database.sql, outbound.acked, endpoints, merchants.posts, faults.faults)),
      ...(queue && consumer ? await brokerChecks(database.sql, outbound.acked, queue, consumer, faults.faults) : []),
      ...(await quarantineChecks(database.sql, outbound.poisonAcked)),
      await transitionPathCheck(),
      {
        name: 'every killed service restarted (answering its health check, R16)',
        ok: faults.restartFailures.length === 0 && health.ok,
        detail:
          [...faults.restartFailures, ...(health.ok ? [] : [`at the end: ${health.report.replace(/\n/g, '; ')}`])].join('; ') ||
          `${faults.faults.length} kills made; every restart and the stack at the end answer their health checks`,
      },
    ];
    const unplanned = apps.exits.filter((e) => !e.planned && !e.signal);
    say(`unplanned app exits (respawned): ${unplanned.length}${unplanned.length ? ` (${unplanned.map((e) => `${e.app} code ${e.code}`).join(', ')})` : ''}`);
    say(`provider modes: ${inbound.modes.join(', ')}; payments API requests ${inbound.sandbox.stats.apiRequests}, 503s ${inbound.sandbox.stats.apiErrors}`);
    say(`never acknowledged within 60 s of resends: ${inbound.unacked.length} webhooks, ${outbound.unacked.length} events (not part of the invariants)`);
    for (const check of checks) say(`${check.ok ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail}`);
    exitCode = checks.every((c) => c.ok) ? 0 : 1;
    say(exitCode === 0 ? 'every invariant held' : `FAILED: ${checks.filter((c) => !c.ok).length} invariant(s); logs in ${join(stack.data, 'logs')}`);
  } catch (error) {
    say(`FAILED: ${(error as Error).stack ?? error}`);
  } finally {
    await apps.stop();
    await sandbox?.close().catch(() => undefined);
    await merchants.close();
    await consumer?.close();
    await database.close();
    if (!args.keep) await stack.down();
    else say(`stack kept running (--keep): APIPAY_DATA=${stack.data} PGPORT=${ports.pg} TEMPORAL_PORT=${ports.temporal} KAFKA_PORT=${ports.kafka}`);
    current.apps = undefined;
    current.stack = undefined;
  }
  return exitCode;
}

const results: { seed: number; code: number }[] = [];
for (const [i, seed] of args.seeds.entries()) {
  if (args.seeds.length > 1) say(`=== seed ${seed} (${i + 1} of ${args.seeds.length}) ===`);
  try {
    results.push({ seed, code: await soakOnce(seed) });
  } catch (error) {
    // e.g. the stack did not come up: this seed failed, the next ones still run
    say(`FAILED (seed ${seed}): ${(error as Error).stack ?? error}`);
    if (!args.keep) await current.stack?.down();
    results.push({ seed, code: 1 });
  }
}
if (args.seeds.length > 1) {
  say(`seeds: ${results.map((r) => `${r.seed} ${r.code === 0 ? 'passed' : r.code === 2 ? 'not run' : 'FAILED'}`).join(', ')}`);
}
process.exit(results.every((r) => r.code === 0) ? 0 : results.some((r) => r.code === 1) ? 1 : 2);
