// R12: the reconciliation histories recorded before attributed resolutions and dual control (A4, A5) replay with
// today's workflow: patched('resolution-access-dual-control') keeps open workflows running after that deploy. Kept
// as recorded; never re-recorded (test/fixtures/histories/pre-a4).
import { describe, expect, it } from 'vitest';
import { HISTORIES_DIR, replayFixture, loadHistoryFixtures } from '../helpers/histories.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime(); // the world's idle close must not shut Temporal's runtime under a replay (replay-runtime.test.ts)

// pre-a4/: recorded before P3 too; pre-a4/p3/: recorded by main with P3's local steps, before A4/A5 met it.
describe.each(['pre-a4/', 'pre-a4/p3/'])('R12 reconciliation histories recorded before A4/A5 (%s)', (dir) => {
  const fixtures = loadHistoryFixtures(new URL(dir, HISTORIES_DIR));

  it('R12 all eight reconciliation paths are kept', () => {
    expect(fixtures.length).toBe(8);
    for (const fixture of fixtures) expect(fixture.file).toBe(`${fixture.path}.json`);
  });

  it.each(fixtures.map((f) => [f.path, f] as const))('R12 %s replays deterministically', async (_path, fixture) => {
    await expect(replayFixture(fixture)).resolves.toBeUndefined();
  });
});
