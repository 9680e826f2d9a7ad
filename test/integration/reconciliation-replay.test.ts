// R2/R12: reconciliations that were resolved by the code before the one-transaction resolution (histories recorded
// as binary protobuf from commit fc4ed85, resolved by update and by signal) replay unchanged with today's workflow code, through
// patched('resolution-one-transaction'): open workflows waiting in manual_review survive the deploy.
import { readFileSync, readdirSync } from 'node:fs';
import protoPackage from '@temporalio/proto'; // transitive dependency of @temporalio/client (its History type)
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_BUNDLE_PATH } from '../helpers/env.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime(); // the world's idle close must not shut Temporal's runtime under a replay (replay-runtime.test.ts)

const dir = new URL('../fixtures/histories/pre-r2/', import.meta.url);
const fixtures = readdirSync(dir).filter((f) => f.endsWith('-before-one-transaction.binpb'));

describe('R2 resolution histories from before the one-transaction change', () => {
  it('R2 there are fixtures for the update and the signal path', () => {
    expect(fixtures.sort()).toEqual(['reconciliation-manual-review-signal-before-one-transaction.binpb', 'reconciliation-manual-review-update-before-one-transaction.binpb']);
  });

  it.each(fixtures)('R2 %s replays deterministically', async (file) => {
    // Binary protobuf (History.encode): the JSON form needs a protobufjs this install resolves twice.
    const history = protoPackage.temporal.api.history.v1.History.decode(readFileSync(new URL(file, dir)));
    expect(history.events.length).toBeGreaterThan(10);
    await expect(Worker.runReplayHistory({ workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }, history, `fixture:${file}`)).resolves.toBeUndefined();
  });
});
