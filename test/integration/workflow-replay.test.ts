// R12: every recorded history of test/fixtures/histories replays against the current workflow code. A change that
// would break an open workflow (a new, removed or reordered command without `patched`) fails here with a
// DeterminismViolationError. Re-record after a deliberate, compatible change: `npm run fixtures:record`
// (docs/workflow-versioning.md).
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { WORKFLOW_BUNDLE_PATH } from '../helpers/env.js';
import { historyFromObject, loadHistoryFixtures } from '../helpers/histories.js';
import { holdRuntime } from '../helpers/world.js';

holdRuntime(); // the world's idle close must not shut Temporal's runtime under a replay (replay-runtime.test.ts)

/** The paths docs/workflow-versioning.md promises a fixture for; a missing file fails the test. */
const EXPECTED = [
  'delivery-delivered-at-once',
  'delivery-retried-then-delivered',
  'delivery-retry-now-during-backoff',
  'delivery-failed-retry-now-continued-as-new',
  'delivery-failed-retry-now-second-run',
  'delivery-failed-non-retryable-window-closed',
  'delivery-signal-with-start-after-window',
  'delivery-slow-lane',
  'delivery-ordered-released-successor',
  'delivery-ordered-waited-for-predecessor',
  'delivery-throttle-waited-for-slot',
  'delivery-retry-parked-then-released',
  'endpoint-probe-released-then-disabled',
  'endpoint-probe-released-backlog',
  'reconciliation-applied',
  'reconciliation-rejected',
  'reconciliation-manual-review-resolved-by-update',
  'reconciliation-manual-review-resolved-by-signal',
  'reconciliation-timed-out-then-resolved',
  'reconciliation-continued-as-new',
  'reconciliation-continued-second-run',
  'reconciliation-ledger-refused-parked',
  'reconciliation-dual-control-cancelled-then-approved',
  'reconciliation-temporal-denied-then-api',
];

const fixtures = loadHistoryFixtures();

describe('R12 recorded workflow histories replay against the current code', () => {
  it('R12 there is a fixture for every workflow path', () => {
    expect(fixtures.map((f) => f.path).sort()).toEqual([...EXPECTED].sort());
    for (const fixture of fixtures) expect(fixture.file).toBe(`${fixture.path}.json`);
  });

  it('R12 every history replays without a determinism violation (Worker.runReplayHistories)', async () => {
    const histories = fixtures.map((f) => ({ workflowId: f.workflowId, history: historyFromObject(f.history) }));
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }, histories)) {
      replayed += 1;
      const fixture = fixtures.find((f) => f.workflowId === result.workflowId && historyRunId(f.history) === result.runId);
      if (result.error) failures.push(`${fixture?.path ?? result.workflowId}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures, 'a workflow change is not replay-safe; see docs/workflow-versioning.md').toEqual([]);
    expect(replayed).toBe(fixtures.length);
  });
});

function historyRunId(history: Record<string, unknown>): string | undefined {
  const [first] = history.events as { workflowExecutionStartedEventAttributes?: { originalExecutionRunId?: string } }[];
  return first?.workflowExecutionStartedEventAttributes?.originalExecutionRunId;
}
