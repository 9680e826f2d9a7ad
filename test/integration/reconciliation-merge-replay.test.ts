// R12: the reconciliation histories recorded on either side of the issue 13 merge — main's (one-transaction
// resolution, no L5 marker) and f1-ledger-objects' (L5 marker, three-step resolution) — replay with today's
// workflow: patched('l5-settlement-discrepancy') and patched('resolution-one-transaction') keep both kinds of open
// workflow running after the deploy. Kept as recorded; never re-recorded (test/fixtures/histories/pre-merge).
// The same for the histories recorded before patched('p3-local-steps') (P3: steps as local activities, pre-p3/).
import { describe, expect, it } from 'vitest';
import { HISTORIES_DIR, replayFixture, loadHistoryFixtures } from '../helpers/histories.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime(); // the world's idle close must not shut Temporal's runtime under a replay (replay-runtime.test.ts)

describe.each(['pre-merge/main', 'pre-merge/f1', 'pre-p3'])('R12 reconciliation histories recorded before a change (%s)', (side) => {
  const fixtures = loadHistoryFixtures(new URL(`${side}/`, HISTORIES_DIR));

  it(`R12 ${side}: all eight reconciliation paths are kept`, () => {
    expect(fixtures.length).toBe(8);
    for (const fixture of fixtures) expect(fixture.file).toBe(`${fixture.path}.json`);
  });

  it.each(fixtures.map((f) => [f.path, f] as const))(`R12 ${side} %s replays deterministically`, async (_path, fixture) => {
    await expect(replayFixture(fixture)).resolves.toBeUndefined();
  });
});
