// R12/R20: the histories recorded before the workflows trusted the database (the reconciliation's start check, the
// sealed continuation, the delivery's start check) replay with today's workflows: the R20 patches keep the executions
// that were open at that deploy running. Kept as recorded; never re-recorded (test/fixtures/histories/pre-r20).
import { describe, expect, it } from 'vitest';
import { HISTORIES_DIR, replayFixture, loadHistoryFixtures } from '../helpers/histories.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime(); // the world's idle close must not shut Temporal's runtime under a replay (replay-runtime.test.ts)

describe('R12 histories recorded before R20 (pre-r20/)', () => {
  const fixtures = loadHistoryFixtures(new URL('pre-r20/', HISTORIES_DIR));

  it('R12 all twenty-one delivery and reconciliation paths are kept', () => {
    expect(fixtures.length).toBe(21);
    for (const fixture of fixtures) expect(fixture.file).toBe(`${fixture.path}.json`);
  });

  it.each(fixtures.map((f) => [f.path, f] as const))('R12 %s replays deterministically', async (_path, fixture) => {
    await expect(replayFixture(fixture)).resolves.toBeUndefined();
  });
});
