// R11: the soak's kill schedule is a function of its seed (replayable), one kill every 30 s over the six targets;
// R16: the command line's --seeds; M11: the broker's kills, on a schedule of their own.
import { describe, expect, it } from 'vitest';
import { parseSoakArgs } from '../../bench/soak/args.js';
import { brokerKills, killSchedule, TARGETS } from '../../bench/soak/random.js';

describe('R11 soak kill schedule', () => {
  it('R11 the same seed gives the same schedule; another seed another one', () => {
    expect(killSchedule(7, 10)).toEqual(killSchedule(7, 10));
    expect(killSchedule(7, 10)).not.toEqual(killSchedule(8, 10));
  });

  it('R11 one kill every 30 s while traffic runs, each of a known target with a 1–5 s down time', () => {
    const kills = killSchedule(1, 60);
    expect(kills.map((k) => k.atS)).toEqual(Array.from({ length: 119 }, (_, i) => 30 * (i + 1)));
    for (const kill of kills) {
      expect(TARGETS).toContain(kill.target);
      expect(kill.downS).toBeGreaterThanOrEqual(1);
      expect(kill.downS).toBeLessThanOrEqual(5);
    }
    expect(new Set(kills.map((k) => k.target))).toEqual(new Set(TARGETS)); // an hour reaches every target
  });

  it('R11 the command line: defaults, named skips only, numbers checked', () => {
    expect(parseSoakArgs(['--minutes', '2', '--seed', '1'])).toMatchObject({
      minutes: 2,
      seed: 1,
      portBase: 25400,
      broker: true,
      batched: false,
    });
    expect(parseSoakArgs(['--no-broker']).broker).toBe(false);
    expect(parseSoakArgs(['--batched']).batched).toBe(true);
    expect(parseSoakArgs(['--skip', 'R1']).skip).toEqual(new Set(['R1']));
    expect(() => parseSoakArgs(['--skip', 'R9'])).toThrow(/known: R1/);
    expect(() => parseSoakArgs(['--minutes', 'x'])).toThrow(/--minutes/);
    expect(() => parseSoakArgs(['--bogus'])).toThrow();
  });

  it('R16 --seeds a,b,c runs each seed in turn; --seed is one; both at once, or a seed that is not a whole number, refused', () => {
    expect(parseSoakArgs([]).seeds).toEqual([1]);
    expect(parseSoakArgs(['--seed', '18'])).toMatchObject({ seed: 18, seeds: [18] });
    expect(parseSoakArgs(['--seeds', '777123,8326839', '--seeds', '20261202'])).toMatchObject({
      seed: 777123,
      seeds: [777123, 8326839, 20261202],
    });
    expect(() => parseSoakArgs(['--seed', '1', '--seeds', '2'])).toThrow(/one of them/);
    expect(() => parseSoakArgs(['--seeds', '1,x'])).toThrow(/--seeds: a seed is a whole number/);
    expect(() => parseSoakArgs(['--seeds', '1,,2'])).toThrow(/--seeds/);
    expect(() => parseSoakArgs(['--seed=-3'])).toThrow(/--seed: a seed/);
  });

  it('R16 seed 34 (the short soak in npm test) kills the worker twice and Temporal once in its two minutes', () => {
    expect(killSchedule(34, 2).map((k) => `${k.atS}s ${k.target}${k.target === 'temporal' ? ` ${k.downS}s` : ''}`)).toEqual([
      '30s worker',
      '60s temporal 1s',
      '90s worker',
    ]);
  });

  it('M11 the broker is killed at 45 s and every 60 s after, 3–10 s down, from the seed; the main schedule stays as it was', () => {
    expect(brokerKills(34, 2).map((k) => k.atS)).toEqual([45, 105]);
    expect(brokerKills(7, 10).map((k) => k.atS)).toEqual([45, 105, 165, 225, 285, 345, 405, 465, 525, 585]);
    expect(brokerKills(7, 10)).toEqual(brokerKills(7, 10));
    for (const kill of brokerKills(7, 60)) {
      expect(kill.target).toBe('rabbitmq');
      expect(kill.downS).toBeGreaterThanOrEqual(3);
      expect(kill.downS).toBeLessThanOrEqual(10);
    }
    expect(killSchedule(34, 2).map((k) => k.target)).not.toContain('rabbitmq');
  });
});
