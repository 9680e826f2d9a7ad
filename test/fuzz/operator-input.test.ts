// R10 over operator input: resolution bodies to POST /admin/v1/reconciliations/{id}/resolution on a reconciliation
// parked in manual_review (real PostgreSQL, Temporal dev server and workers). Each answer comes in time and is a
// 200 with the ledger transaction and its audit row, or a 4xx with neither — never a 5xx, a hang, or money without
// its audit row. (CLI arguments are covered in admin.test.ts.)
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../src/activities/index.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { reconciliationStateQuery } from '../../src/shared/inbound.js';
import { testApp } from '../helpers/app.js';
import { createKey } from '../helpers/access.js';
import { TEST_DATABASE_URL, TEST_SECRETS_KEY } from '../helpers/env.js';
import { testProfile } from '../helpers/profile.js';
import { providerEvent, startPaymentsPeer, startReconciliation, succeeded, waitFor } from '../helpers/reconciliation.js';
import { connectDevServer, startWorkers, testLogger, uniqueTaskQueues } from '../helpers/temporal.js';
import { hostileJson, hostileString, runs, timeoutFor } from './fuzz.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
let app: ReturnType<typeof testApp>;
let stopWorkers: () => Promise<void>;
const provider = `fz-op-${randomUUID().slice(0, 8)}`;
const taskQueues = uniqueTaskQueues('fuzz-operator');
let profile: ReturnType<typeof testProfile>;
const open: string[] = [];

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  peer = await startPaymentsPeer();
  profile = testProfile({
    inbound: { providers: { [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: peer.baseUrl } } },
  });
  const activities = createActivities({ db: database.db, profile, logger: testLogger, secretsKey: TEST_SECRETS_KEY });
  stopWorkers = (await startWorkers({ connection: temporal.native, taskQueues, activities })).stop;
  app = testApp({ db: database.db, temporal: temporal.client, profile, taskQueues });
  financeToken = (await createKey(app, 'operator', undefined, FINANCE)).token;
});
afterAll(async () => {
  await Promise.all(open.map((id) => temporal.client.workflow.getHandle(id).terminate('fuzz cleanup').catch(() => {})));
  await stopWorkers?.();
  await peer?.close();
  await temporal?.close();
  await database?.close();
});

/** A reconciliation the provider disagrees with (amount off by one): it waits in manual_review. */
async function parked() {
  const event = providerEvent({ amountMinor: '2000' });
  peer.set(event.paymentReference, succeeded(event, { amountMinor: '1999' }));
  const handle = await startReconciliation(temporal.client, profile, taskQueues.reconciliation, event, { provider });
  open.push(handle.workflowId);
  // Under heavy load a workflow task can time out; until its retry runs, queries answer FAILED_PRECONDITION.
  await waitFor(async () => (await handle.query(reconciliationStateQuery).catch(() => null))?.state === 'manual_review', 120_000, 'manual_review');
  return { id: handle.workflowId, reference: event.paymentReference };
}

const FINANCE = `fuzz-finance-${randomUUID().slice(0, 6)}`;
let financeToken = '';
const FIELDS = ['decision', 'operator', 'reason', 'amount_minor', 'currency', 'extra'];
const body = fc
    .record({
      decision: fc.constantFrom('applied', 'rejected'),
      // A2: the key's own name is accepted; any other operator is refused (403). A12: a person's key, not ADMIN_TOKEN.
      operator: fc.oneof(fc.constantFrom(FINANCE, 'ADMIN_TOKEN', 'ana@finance'), hostileString),
      reason: fc.oneof(fc.constant('checked with the provider'), hostileString),
      changes: fc.array(fc.tuple(fc.constantFrom(...FIELDS), fc.oneof(hostileJson, fc.constant(undefined))), { maxLength: 2 }),
    })
    .map(({ changes, ...base }) => {
      const document: Record<string, unknown> = { ...base };
      for (const [field, value] of changes) {
        if (value === undefined) delete document[field];
        else document[field] = value;
      }
      return document;
    });

describe('R10 operator input', () => {
  it('R10 resolution bodies: 200 with ledger and audit, or a 4xx with neither; in time, never a 5xx', { timeout: timeoutFor(25, 3_000) }, async () => {
    let current = await parked();
    await fc.assert(
      fc.asyncProperty(body, async (document) => {
        let timer: NodeJS.Timeout | undefined;
        const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer within 15 s (a hang)')), 15_000)));
        const response = await Promise.race([
          app.request(`/admin/v1/reconciliations/${encodeURIComponent(current.id)}/resolution`, {
            method: 'POST',
            headers: { authorization: `Bearer ${financeToken}`, 'content-type': 'application/json' },
            body: JSON.stringify(document),
          }),
          hang,
        ]).finally(() => clearTimeout(timer));
        const text = await response.text();
        expect(response.status, text).toBeLessThan(500);
        const read = async () => {
          const [row] = await database.db.execute<{ audits: number; events: number; postings: number; unaudited: number; state: string }>(sql`
          select (select count(*)::int from operator_resolutions where reconciliation_id = ${current.id}) as audits,
                 (select count(*)::int from audit_events where target_id = ${current.id}) as events,
                 (select count(*)::int from ledger_transactions where payment_reference = ${current.reference}) as postings,
                 (select count(*)::int from ledger_transactions l where l.payment_reference = ${current.reference}
                    and not exists (select 1 from operator_resolutions o where o.ledger_transaction_id = l.id)) as unaudited,
                 (select state from reconciliations where id = ${current.id}) as state`);
          return row!;
        };
        let row = await read();
        if (response.status === 202) {
          // R2: accepted but not finished within the request timeout (a loaded machine): it finishes behind the
          // answer, with its audit row, or is refused with neither.
          await waitFor(async () => (row = await read()).audits > 0, 60_000, 'the accepted resolution to finish').catch(() => {});
        }
        expect(row!.unaudited, 'ledger transactions without their audit row').toBe(0);
        expect(row!.events, 'A3: one audit_events row per resolution').toBe(row!.audits);
        if (response.status === 200 || (response.status === 202 && row.audits > 0)) {
          expect(row!.audits).toBe(1);
          expect(row!.postings).toBe(document.decision === 'applied' ? 1 : 0);
          current = await parked(); // this one is resolved: the next run needs a fresh one
        } else {
          expect(response.status).toBeGreaterThanOrEqual(400);
          expect(row, `refused with ${response.status}: ${text}`).toMatchObject({ audits: 0, events: 0, postings: 0, state: 'manual_review' });
        }
      }),
      runs(25),
    );
  });
});
