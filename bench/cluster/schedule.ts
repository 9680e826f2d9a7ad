// Issue 34 (R22): the cluster drill's seeded kill plan: every target once, in an order and with timings the seed
// chooses (as the soak's schedule does), one history host, one matching host, the Kafka leader of the busiest
// partition, one of each ApiPay process and the PostgreSQL primary (promoted standby, then the old primary rejoins).
import { between, pick, seeded } from '../soak/random.js';

export type DrillTarget =
  'temporal-history' | 'temporal-matching' | 'kafka-leader' | 'api' | 'worker' | 'dispatcher' | 'pg-primary';
export const FULL_TARGETS: readonly DrillTarget[] = [
  'temporal-history',
  'temporal-matching',
  'kafka-leader',
  'api',
  'worker',
  'dispatcher',
  'pg-primary',
];

export interface DrillKill {
  target: DrillTarget;
  /** Which replica (1 or 2) for history, matching and the ApiPay processes. */
  index: number;
  /** Seconds the node stays down before `scripts/cluster.sh up` brings it back (pg-primary: before the promotion). */
  downS: number;
  /** Seconds of load after the node is back before the next kill. */
  afterS: number;
}

/** The soak's fault classes (bench/soak/invariants.ts): which extra POSTs and interrupted attempts a kill explains. */
export const FAULT_CLASS: Record<DrillTarget, string> = {
  'temporal-history': 'temporal',
  'temporal-matching': 'temporal',
  'kafka-leader': 'kafka',
  api: 'api',
  worker: 'worker',
  dispatcher: 'dispatcher',
  'pg-primary': 'postgresql',
};

export function drillSchedule(seed: number, targets: readonly DrillTarget[] = FULL_TARGETS, replicas = 2): DrillKill[] {
  const random = seeded(seed ^ 0xc1a5);
  const left = [...targets];
  const kills: DrillKill[] = [];
  while (left.length) {
    const target = left.splice(Math.floor(random() * left.length), 1)[0]!;
    kills.push({
      target,
      index: pick(
        random,
        Array.from({ length: replicas }, (_, i) => i + 1),
      ),
      downS: between(random, 5, 12),
      afterS: between(random, 25, 35),
    });
  }
  return kills;
}

/** scripts/cluster.sh's node for a kill (kafka-leader is looked up at the time of the kill). */
export function nodeOf(kill: DrillKill): string {
  if (kill.target === 'pg-primary' || kill.target === 'kafka-leader') return kill.target;
  return `${kill.target}${kill.index}`;
}
