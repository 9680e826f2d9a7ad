// R12/P22: the endpoint probe's histories recorded before a pass became one activity (parkedState, expireParked and
// releaseParked as three) replay with today's workflow: `patched('p22-probe-one-pass')` keeps the probes that were
// open at that deploy running. Kept as recorded; never re-recorded (test/fixtures/histories/pre-p22).
import { describe, expect, it } from 'vitest';
import { HISTORIES_DIR, replayFixture, loadHistoryFixtures } from '../helpers/histories.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime(); // the world's idle close must not shut Temporal's runtime under a replay (replay-runtime.test.ts)

describe('R12 probe histories recorded before P22 (pre-p22/)', () => {
  const fixtures = loadHistoryFixtures(new URL('pre-p22/', HISTORIES_DIR));

  it('R12 both probe paths are kept (open then disabled; open, closed, released, empty twice)', () => {
    expect(fixtures.map((f) => f.path).sort()).toEqual(['endpoint-probe-released-backlog', 'endpoint-probe-released-then-disabled']);
  });

  it.each(fixtures.map((f) => [f.path, f] as const))('R12 %s replays deterministically', async (_path, fixture) => {
    await expect(replayFixture(fixture)).resolves.toBeUndefined();
  });
});
