// Seeded randomness for the soak (R11): the same seed gives the same kill schedule and the same traffic mix.
export type Random = () => number;

/** mulberry32: small, fast, and good enough to pick targets and mixes; not for secrets. */
export function seeded(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
export const between = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

export const TARGETS = ['api', 'worker', 'dispatcher', 'kafka', 'postgresql', 'temporal'] as const;
export type Target = (typeof TARGETS)[number];
export const APP_TARGETS: readonly Target[] = ['api', 'worker', 'dispatcher'];

/** M11: the soak's RabbitMQ broker, killed on a schedule of its own (brokerKills) when the soak runs one. */
export type KillTarget = Target | 'rabbitmq';

export interface Kill {
  /** Seconds after traffic starts. */
  atS: number;
  target: KillTarget;
  /** How long a service stays down before the stack script restarts it (app processes respawn at once). */
  downS: number;
}

/** One kill every `everyS` seconds while traffic runs; a fresh generator so traffic randomness cannot shift it. */
export function killSchedule(seed: number, minutes: number, everyS = 30): Kill[] {
  const random = seeded(seed ^ 0x5eed);
  const kills: Kill[] = [];
  for (let atS = everyS; atS < minutes * 60; atS += everyS) {
    kills.push({ atS, target: pick(random, TARGETS), downS: between(random, 1, 5) });
  }
  return kills;
}

/**
 * M11: kill -9 of the broker node at 45 s and every 60 s after, between the main schedule's kills (its own generator
 * for the down times, so the main schedule of a seed stays what it was), down 3–10 s before the stack script restarts it.
 */
export function brokerKills(seed: number, minutes: number): Kill[] {
  const random = seeded(seed ^ 0xb40c);
  const kills: Kill[] = [];
  for (let atS = 45; atS < minutes * 60; atS += 60) kills.push({ atS, target: 'rabbitmq', downS: between(random, 3, 10) });
  return kills;
}
