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

export interface Kill {
  /** Seconds after traffic starts. */
  atS: number;
  target: Target;
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
