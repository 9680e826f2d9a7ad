// Per test file: Temporal's worker runtime logs at WARN so test output shows what the tests print; and after the
// file (R14, I7), every reconciliation this run touched has transitions that are a path of the state machine.
import { Runtime } from '@temporalio/worker';
import { afterAll, expect, inject } from 'vitest';
import { createDatabase } from '../../src/db/client.js';
import { consoleWorkerLogger } from '../../src/temporal-workers/build.js';
import { findTransitionPathViolations } from '../../src/inbound/transition-path-audit.js';
import { PATH_FIXTURE_PREFIX, TEST_DATABASE_URL } from './env.js';

try {
  Runtime.install({ logger: consoleWorkerLogger((process.env.TEMPORAL_LOG_LEVEL as 'WARN') ?? 'WARN') });
} catch {
  // Already installed in this process by an earlier file.
}

afterAll(async () => {
  const database = createDatabase(TEST_DATABASE_URL, { max: 1 });
  try {
    // Reconciliations of files still running are read mid-way: a prefix of a path is a path, so they pass too.
    const violations = await findTransitionPathViolations(database.sql, {
      since: new Date(inject('testRunStartedAt')),
      excludeIdPrefix: PATH_FIXTURE_PREFIX,
    });
    expect(violations, "R14: every reconciliation's transitions, in recorded order, are a path of the state machine").toEqual([]);
  } finally {
    await database.close();
  }
});
