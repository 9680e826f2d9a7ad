// I7, R15 on the real PostgreSQL: findTransitionPathViolations reads reconciliation_transitions in recorded order
// (time, then id) and reports the reconciliations whose rows are not a path, e.g. issue 24's lost-task sequence.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { findTransitionPathViolations } from '../../src/inbound/transition-path-audit.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';

let database: Database;
beforeAll(() => {
  database = createDatabase(TEST_DATABASE_URL, { max: 2 });
});
afterAll(async () => {
  await database?.close();
});

const run = randomUUID().slice(0, 8);
const prefix = `reconcile:tpath-${run}:`;

async function reconciliation(event: string, rows: [string, string, string, string][]) {
  const id = `${prefix}${event}`;
  await database.sql`
    insert into reconciliations (id, provider, provider_event_id, event_type, payment_reference, amount_minor, currency,
                                 effective_at, state, acknowledged_at)
    values (${id}, ${`tpath-${run}`}, ${event}, 'payment.succeeded', ${`pay_${event}`}, 100, 'EUR', now(), 'received', now())`;
  // `at` as given (out of insertion order on purpose): the check must follow recorded time, not id
  for (const [from, to, actor, at] of rows) {
    await database.sql`insert into reconciliation_transitions (reconciliation_id, from_state, to_state, actor, at)
                       values (${id}, ${from}, ${to}, ${actor}, ${at})`;
  }
  return id;
}

describe('R15 findTransitionPathViolations', () => {
  it('reports only the reconciliations whose rows are not a path, in recorded-time order', async () => {
    await reconciliation('good', [
      ['reconciling', 'manual_review', 'system', '2026-12-02T06:53:45.199Z'],
      ['received', 'reconciling', 'system', '2026-12-02T06:53:45.109Z'],
      ['manual_review', 'rejected', 'operator:ops', '2026-12-02T07:00:00Z'],
    ]);
    const bad = await reconciliation('lost-task', [
      ['received', 'reconciling', 'system', '2026-12-02T06:53:45.109Z'],
      ['reconciling', 'manual_review', 'system', '2026-12-02T06:53:45.199Z'],
      ['reconciling', 'applied', 'system', '2026-12-02T06:54:44.298Z'],
    ]);
    const violations = await findTransitionPathViolations(database.sql, { idPrefix: prefix });
    expect(violations.map((v) => [v.reconciliationId, v.index, v.problem])).toEqual([[bad, 2, 'broken_chain']]);
  });

  it('rows of one instant are read in id order', async () => {
    const at = '2026-12-02T08:00:00Z';
    const id = await reconciliation('same-instant', [
      ['received', 'reconciling', 'system', at],
      ['reconciling', 'applied', 'system', at],
    ]);
    const violations = await findTransitionPathViolations(database.sql, { idPrefix: id });
    expect(violations).toEqual([]);
  });
});
