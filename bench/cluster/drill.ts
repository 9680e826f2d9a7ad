// Issue 34 (R22): one cluster drill: a fresh scripts/cluster.sh cluster, the soak's mixed load through a round-robin
// balancer in front of the APIs (signed provider webhooks; Kafka events to merchants that answer, fail, time out),
// then the seeded kills in turn under load, each node brought back (the PostgreSQL primary: its standby promoted
// first, the old primary rejoining as a standby); after a settle, the soak's invariants (bench/soak/invariants.ts)
// and per kill the recovery time and deliveries/s and p99 before, during and after (bench/cluster/metrics.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase } from '../../src/db/client.js';
import { findTransitionPathViolations } from '../../src/inbound/transition-path-audit.js';
import { startRoundRobin } from '../lib/replicas.js';
import { startInboundTraffic } from '../soak/inbound.js';
import { inboundChecks, ledgerChecks, outboundChecks, type Check, type Fault } from '../soak/invariants.js';
import { startMerchants } from '../soak/merchants.js';
import { registerEndpoints, startOutboundTraffic } from '../soak/outbound.js';
import { soakSecrets, writeSoakProfile } from '../soak/profile.js';
import { seeded } from '../soak/random.js';
import { waitReady, waitSettled } from '../soak/wait.js';
import { cluster } from './cluster.js';
import { busiestPartitionLeader } from './kafka-leader.js';
import { figureLine, figures, firstDeliveries, type KillFigures } from './metrics.js';
import { FAULT_CLASS, drillSchedule, nodeOf, type DrillTarget } from './schedule.js';

export interface DrillOptions {
  seed: number;
  offset: number;
  webhookRate: number;
  eventRate: number;
  warmupS: number;
  settleMinutes: number;
  targets?: readonly DrillTarget[];
  /** CLUSTER_* variables of a smaller cluster (the reduced test). */
  clusterEnv?: Record<string, string>;
  keep?: boolean;
  say: (line: string) => void;
}

export interface DrillResult {
  checks: Check[];
  kills: KillFigures[];
  ok: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runDrill(o: DrillOptions): Promise<DrillResult> {
  const { say } = o;
  const c = cluster({ offset: o.offset, env: o.clusterEnv });
  const plan = drillSchedule(o.seed, o.targets);
  say(`seed ${o.seed}: ${plan.map((k) => `${nodeOf(k)} (down ${k.downS}s, then ${k.afterS}s)`).join(', ')}`);
  await c.down();
  await c.wipe();
  mkdirSync(join(c.data, 'logs'), { recursive: true });
  const ports = { balancer: 13000 + o.offset, merchants: 13090 + o.offset, sandbox: 13091 + o.offset };
  const secrets = soakSecrets();
  Object.assign(process.env, secrets);
  const { path: profilePath, profile } = writeSoakProfile(c.data, ports.sandbox);
  writeFileSync(
    join(c.data, 'apps.env'),
    Object.entries({
      ...secrets,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      APIPAY_PROFILE: profilePath,
      DATABASE_POOL_MAX: '6',
    })
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
    { mode: 0o600 },
  );
  const startedUp = Date.now();
  say('cluster up (fresh)');
  await c.up();
  const conn = await c.connection();
  say(`cluster up in ${((Date.now() - startedUp) / 1000).toFixed(0)}s`);
  const nodes = await c.nodes();
  const apiPorts = nodes.filter((n) => /^api\d$/.test(n)).map((n) => 13000 + o.offset + Number(n.slice(3)));

  const random = seeded(o.seed);
  const merchants = await startMerchants({ port: ports.merchants, random, slowMs: 3_000 });
  const balancer = await startRoundRobin(ports.balancer, apiPorts);
  const apiUrl = `http://127.0.0.1:${ports.balancer}`;
  const brokers = conn.KAFKA_BROKERS!.split(',');
  const database = createDatabase(conn.DATABASE_URL!, { max: 2 });
  const faults: Fault[] = [];
  const kills: KillFigures[] = [];
  const restartFailures: string[] = [];
  let sandbox: { close(): Promise<void> } | undefined;
  try {
    await waitReady(`${apiUrl}/readyz`, 120_000);
    const merchant = `acct_cluster_${o.seed}`;
    const endpoints = await registerEndpoints({ apiUrl, adminToken: secrets.ADMIN_TOKEN, merchantsUrl: merchants.url, merchant });
    const inbound = await startInboundTraffic({
      profile,
      port: ports.sandbox,
      ingressUrl: apiUrl,
      ratePerS: o.webhookRate,
      random,
      seed: o.seed,
      providerAnswering: true,
    });
    sandbox = inbound.sandbox;
    const outbound = await startOutboundTraffic({
      brokers,
      topic: profile.outbound.kafka.topic,
      merchant,
      ratePerS: o.eventRate,
      random,
      seed: o.seed,
      nulPoison: false,
    });
    const t0 = Date.now();
    const at = () => `${((Date.now() - t0) / 1000).toFixed(0)}s`;
    say(`load: ${o.webhookRate} webhooks/s, ${o.eventRate} events/s × ${endpoints.length} endpoints; warm-up ${o.warmupS}s`);
    await sleep(o.warmupS * 1000);
    const marks: { node: string; killedAt: number; backAt: number }[] = [];
    for (const kill of plan) {
      let node = nodeOf(kill);
      if (kill.target === 'kafka-leader') {
        const leader = await busiestPartitionLeader(brokers, profile.outbound.kafka.topic);
        say(`${at()} busiest partition ${leader.partition} (${leader.messages} messages) led by ${leader.node}`);
        node = leader.node;
      }
      if (kill.target === 'pg-primary') node = conn.PG_PRIMARY = (await c.connection()).PG_PRIMARY!;
      const killedAt = Date.now();
      faults.push({ target: FAULT_CLASS[kill.target], at: killedAt });
      say(`${at()} kill -9 ${node}`);
      await c.kill(node);
      await sleep(kill.downS * 1000);
      if (kill.target === 'pg-primary') {
        say(`${at()} promote the standby: ${(await c.promote()).split('\n').pop()}`);
      }
      try {
        await c.up(node);
      } catch (error) {
        restartFailures.push(`${node}: ${(error as Error).message.slice(0, 300)}`);
      }
      const backAt = Date.now();
      say(`${at()} ${node} back`);
      marks.push({ node, killedAt, backAt });
      await sleep(kill.afterS * 1000);
    }
    const loadEnd = Date.now();
    say('traffic stopping (resending what was not acknowledged)');
    await Promise.all([inbound.stop(), outbound.stop()]);
    say(
      `traffic stopped: ${inbound.acked.length}/${inbound.sent} webhooks and ${outbound.acked.length}/${outbound.sent} events acknowledged; settling`,
    );
    const deliveries = firstDeliveries(merchants.posts, outbound.sentAt);
    for (const [i, m] of marks.entries())
      kills.push(figures(m.node, m.killedAt, m.backAt, marks[i + 1]?.killedAt ?? loadEnd, deliveries));
    say(`settle: ${await waitSettled(database.sql, inbound.acked, outbound.acked, o.settleMinutes * 60_000)}`);
    const health = await c.status();
    await c.stop(...nodes.filter((n) => /^(api|worker|dispatcher)\d$/.test(n))); // nothing moves while the checks read
    const transitions = await findTransitionPathViolations(database.sql);
    const checks: Check[] = [
      ...(await inboundChecks(database.sql, inbound.acked)),
      ...(await ledgerChecks(database.sql)),
      ...(await outboundChecks(database.sql, outbound.acked, endpoints, merchants.posts, faults)),
      {
        name: "every reconciliation's transitions are a path of the state machine (R15, I7)",
        ok: transitions.length === 0,
        detail: `${transitions.length} violations`,
      },
      {
        name: 'every killed node came back and the cluster answers its health checks at the end',
        ok: restartFailures.length === 0 && health.ok,
        detail:
          [...restartFailures, ...(health.ok ? [] : [health.report.replace(/\n/g, '; ')])].join('; ') ||
          `${marks.length} kills, every node back`,
      },
    ];
    say(`status before the checks:\n${health.report}`);
    say(`balancer: ${[...balancer.forwarded].map(([port, n]) => `:${port} ${n}`).join(', ')} requests`);
    for (const k of kills) say(`KILL ${figureLine(k)}`);
    for (const check of checks) say(`${check.ok ? 'PASS' : 'FAIL'} ${check.name}: ${check.detail}`);
    const ok = checks.every((x) => x.ok);
    say(
      ok ? 'every invariant held' : `FAILED: ${checks.filter((x) => !x.ok).length} invariant(s); logs in ${join(c.data, 'logs')}`,
    );
    return { checks, kills, ok };
  } finally {
    await sandbox?.close().catch(() => undefined);
    balancer.close();
    await merchants.close();
    await database.close();
    if (!o.keep) await c.down();
  }
}
