// P13/P16/P22: the probe's decision for one pass (decideProbeStep), which the workflow's old path and the one activity
// of P22 share: the cases by name, then a run of passes over arbitrary readings (fast-check) against the rules.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideProbeStep, PROBE_START, probeWaitMs, type ParkedState, type ProbeMemo } from '../../src/shared/endpoint-probe.js';

const ticks = { probeEveryMs: 60_000, releaseTickMs: 1000 };
const reading = (over: Partial<ParkedState> = {}): ParkedState => ({
  parked: 5,
  open: true,
  disabled: false,
  ramping: false,
  at: 1_000_000,
  failingSince: 400_000,
  ...over,
});

describe('P22 decideProbeStep', () => {
  it('P13 a disabled endpoint: its parked deliveries are failed, whatever else the reading says', () => {
    expect(decideProbeStep(reading({ disabled: true, parked: 0 }), { ...PROBE_START, emptyOnce: true }, ticks).step).toEqual({ kind: 'expire-all' });
  });

  it('P13 nothing parked: a tick’s wait, then done on the second empty reading unless a ramp runs', () => {
    const first = decideProbeStep(reading({ parked: 0 }), PROBE_START, ticks);
    expect(first.step).toEqual({ kind: 'wait', waitMs: 1000 });
    expect(decideProbeStep(reading({ parked: 0 }), first.memo, ticks).step).toEqual({ kind: 'done' });
    expect(decideProbeStep(reading({ parked: 0, ramping: true }), first.memo, ticks).step).toEqual({ kind: 'wait', waitMs: 1000 });
    // A parked delivery between the two empty readings starts the count again.
    const between = decideProbeStep(reading({ parked: 1 }), first.memo, ticks);
    expect(decideProbeStep(reading({ parked: 0 }), between.memo, ticks).step.kind).toBe('wait');
  });

  it('P16 open: probes wait 1 s, 2 s, 4 s… up to probe_every; the first closed reading releases with the outage length', () => {
    let memo: ProbeMemo = PROBE_START;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const { step, memo: next } = decideProbeStep(reading(), memo, { ...ticks, probeEveryMs: 30_000 });
      expect(step.kind).toBe('probe');
      if (step.kind === 'probe') waits.push(step.waitMs);
      memo = next;
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    const closed = decideProbeStep(reading({ open: false, failingSince: null, at: 1_500_000 }), memo, ticks);
    expect(closed.step).toEqual({ kind: 'release', waitMs: 1000, closedAt: 1_500_000, outageMs: 1_100_000 });
    // The ramp counts from the first closed reading, not the latest; a closed reading resets the probe's backoff.
    const later = decideProbeStep(reading({ open: false, at: 1_600_000 }), closed.memo, ticks);
    expect(later.step).toMatchObject({ kind: 'release', closedAt: 1_500_000 });
    expect(later.memo.failedProbes).toBe(0);
  });

  it('P16 a release with no open reading before it (the probe started after the return) has no outage length', () => {
    expect(decideProbeStep(reading({ open: false }), PROBE_START, ticks).step).toEqual({ kind: 'release', waitMs: 1000, closedAt: 1_000_000 });
  });

  it('P22 over any run of readings: done only after two empty readings in a row with no ramp, waits within bounds', () => {
    const arbReading = fc.record({
      parked: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1000 })),
      open: fc.boolean(),
      disabled: fc.boolean(),
      ramping: fc.boolean(),
      at: fc.integer({ min: 0, max: 120_000 }), // since the previous reading: the clock only goes forward
      failingSince: fc.option(fc.integer({ min: 0, max: 1e12 })),
    });
    fc.assert(
      fc.property(fc.array(arbReading, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1000, max: 600_000 }), (readings, probeEveryMs) => {
        let memo: ProbeMemo = PROBE_START;
        let previous: ParkedState | undefined;
        let openRun = 0;
        let clock = 0;
        for (const delta of readings) {
          const r = { ...delta, at: (clock += delta.at) };
          const { step, memo: next } = decideProbeStep(r, memo, { probeEveryMs, releaseTickMs: 1000 });
          if (r.disabled) expect(step.kind).toBe('expire-all');
          if (step.kind === 'expire-all' || step.kind === 'done') {
            if (step.kind === 'done') expect(r.parked === 0 && !r.ramping && previous?.parked === 0 && !previous.disabled).toBe(true);
            return;
          }
          if (step.kind === 'probe') {
            expect(r.open && r.parked > 0).toBe(true);
            expect(step.waitMs).toBe(probeWaitMs(openRun, probeEveryMs));
            expect(step.waitMs).toBeLessThanOrEqual(probeEveryMs);
          }
          if (step.kind === 'release') expect(!r.open && r.parked > 0 && step.closedAt <= r.at).toBe(true);
          if (step.kind === 'wait') expect(r.parked).toBe(0);
          if (r.parked > 0) openRun = r.open ? openRun + 1 : 0;
          memo = next;
          previous = r;
        }
      }),
    );
  });
});
