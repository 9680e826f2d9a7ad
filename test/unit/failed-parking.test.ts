// P23: which failed first attempts are parked instead of starting their workflow (src/outbound/failed-parking.ts
// `toPark`), by property: only a start that resumes RETRYING after attempt 1, and exactly when its endpoint parks by
// the one rule of the fan-out and the retries (src/outbound/circuit.ts `parks`); never an ordered endpoint's (M3),
// never with the circuit off, never a delivery whose endpoint row was not read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parks, type CircuitSettings } from '../../src/outbound/circuit.js';
import type { DeliveryToStart } from '../../src/outbound/delivery-start.js';
import { toPark, type ParkingEndpoint } from '../../src/outbound/failed-parking.js';
import type { RecoverySettings } from '../../src/outbound/recovery.js';

const NOW = 1_800_000_000_000;
const recovery: RecoverySettings = {
  jitter: 0,
  ramp: true,
  ramp_after: 30_000,
  ramp_start_per_second: 5,
  ramp_interval: 10_000,
  ramp_max_per_second: 100,
};
const circuit: CircuitSettings = {
  open_after_failures: 3,
  open_after: 5_000,
  open_after_burst: 3,
  probe_every: 5_000,
  release_tick: 1_000,
};

const endpointArb: fc.Arbitrary<ParkingEndpoint> = fc.record({
  consecutiveFailures: fc.integer({ min: 0, max: 10 }),
  failingSince: fc.option(fc.integer({ min: 0, max: 60_000 }).map((ago) => new Date(NOW - ago))),
  ordering: fc.constantFrom('none' as const, 'per_endpoint' as const),
  recoveringSince: fc.option(fc.integer({ min: 0, max: 600_000 }).map((ago) => new Date(NOW - ago))),
  ownRate: fc.option(fc.integer({ min: 1, max: 50 })),
  hasParked: fc.boolean(),
});
const startArb = (endpointIds: string[]): fc.Arbitrary<DeliveryToStart> =>
  fc
    .record({
      deliveryId: fc.uuid(),
      endpointId: fc.constantFrom(...endpointIds, 'whe_unknown'),
      status: fc.constantFrom('RETRYING', 'FAILED', 'none'),
      priorAttempts: fc.constantFrom(undefined, 0, 1, 2),
    })
    .map(({ deliveryId, endpointId, status, priorAttempts }) => ({
      deliveryId,
      endpointId,
      merchantAccount: 'acct_p23',
      eventType: 'payment.succeeded',
      ...(priorAttempts === undefined ? {} : { priorAttempts }),
      ...(status === 'none' ? {} : { resume: { status: status as 'RETRYING' | 'FAILED', nextAttemptAt: NOW + 5_000 } }),
    }));

const down: ParkingEndpoint = {
  consecutiveFailures: 5,
  failingSince: new Date(NOW - 10_000),
  ordering: 'none',
  recoveringSince: null,
  ownRate: null,
  hasParked: false,
};
const failedFirst = (
  endpointId: string,
  resume: DeliveryToStart['resume'] = { status: 'RETRYING', nextAttemptAt: NOW + 5_000 },
): DeliveryToStart => ({
  deliveryId: `whd_${endpointId}`,
  endpointId,
  merchantAccount: 'acct_p23',
  eventType: 'payment.succeeded',
  priorAttempts: 1,
  resume,
});

describe('P23 a failed first attempt into an open circuit is parked, not started', () => {
  it('parks a RETRYING start after attempt 1 whose endpoint’s circuit is open; starts the rest', () => {
    const endpoints = new Map([
      ['whe_down', down],
      ['whe_up', { ...down, consecutiveFailures: 1 }],
      ['whe_ordered', { ...down, ordering: 'per_endpoint' as const }],
    ]);
    const starts = [
      failedFirst('whe_down'),
      failedFirst('whe_up'),
      failedFirst('whe_ordered'),
      failedFirst('whe_down', { status: 'FAILED', nextAttemptAt: null }), // the last attempt, or a disabled endpoint
      { ...failedFirst('whe_down'), deliveryId: 'whd_pending', priorAttempts: 0, resume: undefined }, // never attempted
      failedFirst('whe_missing'),
    ];
    expect(toPark(starts, endpoints, { circuit, recovery }, NOW).map((d) => d.endpointId)).toEqual(['whe_down']);
    expect(toPark(starts, endpoints, { circuit: { ...circuit, open_after_failures: 0 }, recovery }, NOW)).toEqual([]);
  });

  it('by property: parked exactly when it resumes RETRYING after attempt 1 and its endpoint parks by `parks`', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('whe_a', 'whe_b', 'whe_c'), endpointArb, { minKeys: 1 }),
        fc.array(startArb(['whe_a', 'whe_b', 'whe_c']), { maxLength: 30 }),
        (rows, starts) => {
          const endpoints = new Map(Object.entries(rows));
          const parked = new Set(toPark(starts, endpoints, { circuit, recovery }, NOW));
          for (const d of starts) {
            const endpoint = endpoints.get(d.endpointId);
            const expected =
              d.resume?.status === 'RETRYING' &&
              d.priorAttempts === 1 &&
              endpoint !== undefined &&
              parks(endpoint, circuit, recovery, NOW);
            expect(parked.has(d)).toBe(expected);
            if (parked.has(d)) expect(endpoint!.ordering).toBe('none');
          }
        },
      ),
    );
  });
});
