// A24 on the real Temporal dev server and PostgreSQL, as an operator with the Temporal UI would try it: a signed
// admin request copied from a workflow history and sent again through Temporal is refused when it is older than
// admin.signed_request_ttl, when its key was revoked meanwhile, and when the workflow already took that request id
// (even though it refused it the first time). The audit row's request id is the server's, never the client's.
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/access/request-signing.js';
import { auditEvents } from '../../src/db/schema/index.js';
import { reconciliationStateQuery, resolveUpdate, type OperatorResolution } from '../../src/shared/inbound.js';
import { callAs, createKey, type Caller } from '../helpers/access.js';
import { TEST_SECRETS_KEY } from '../helpers/env.js';
import { ledgerRowsFor } from '../helpers/reconciliation.js';
import { useReviewWorld, type ReviewWorld } from '../helpers/review-world.js';
import type { World } from '../helpers/world.js';

const review = useReviewWorld({
  label: 'signed-expiry',
  inbound: { resolution_via_temporal: 'deny' } /* admin.signed_request_ttl: the default 5m */,
});
const { parked } = review;
let database: World['database'];
let app: ReviewWorld['app'];
let alice: Caller;
beforeAll(async () => {
  ({ database } = review.world);
  app = review.app;
  alice = await createKey(app, 'operator', undefined, 'alice-a24');
});

const rejected: OperatorResolution = { decision: 'rejected', operator: 'alice-a24', reason: 'not ours' };
/** What the admin API would have signed for `who`, issued `agoMs` ago: as copied from a workflow history. */
const signedAs = (workflowId: string, who: Caller, resolution: OperatorResolution, agoMs = 0): OperatorResolution => ({
  ...resolution,
  api: signRequest(TEST_SECRETS_KEY, workflowId, 'resolve', resolution, {
    principal: { keyId: who.id, name: 'alice-a24', role: who.role },
    requestId: randomUUID(),
    issuedAt: new Date(Date.now() - agoMs).toISOString(),
  }),
});
const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return String((error as WorkflowUpdateFailedError).cause?.message);
};

describe('A24 signed admin requests expire, die with their key and are spent on arrival', () => {
  it('A24 a signed request sent again through Temporal after admin.signed_request_ttl is refused; nothing is posted', async () => {
    const { event, handle } = await parked('2000');
    const old = signedAs(handle.workflowId, alice, rejected, 6 * 60_000);
    expect(await refusal(handle.executeUpdate(resolveUpdate, { args: [old] }))).toMatch(/expired/);
    // Spent although refused: the same request again is refused as used, even by the validator.
    expect(await refusal(handle.executeUpdate(resolveUpdate, { args: [old] }))).toMatch(/already used/);
    const state = await handle.query(reconciliationStateQuery);
    expect(state.state).toBe('manual_review');
    expect(await ledgerRowsFor(database.db, event.paymentReference)).toEqual([]);
    // A fresh one from the same key still resolves: the refusal was the age, not the key.
    expect(await handle.executeUpdate(resolveUpdate, { args: [signedAs(handle.workflowId, alice, rejected)] })).toMatchObject({
      state: 'rejected',
    });
  });

  it('A24 a signed request sent after its key was revoked is refused', async () => {
    const { handle } = await parked('2000');
    const bob = await createKey(app, 'operator', undefined, 'bob-a24');
    const request = signedAs(handle.workflowId, bob, { ...rejected, operator: 'bob-a24' });
    const admin = await createKey(app, 'admin', undefined, 'admin-a24');
    expect((await callAs(app, admin.token, 'POST', `/api-keys/${bob.id}/revoke`)).status).toBe(200);
    expect(await refusal(handle.executeUpdate(resolveUpdate, { args: [request] }))).toMatch(/revoked/);
    expect((await handle.query(reconciliationStateQuery)).state).toBe('manual_review');
  });

  it('A24 a client-chosen X-Request-Id is not the audit row request id; it is kept beside the server one', async () => {
    const { handle } = await parked('2000');
    const chosen = `client-${randomUUID()}`;
    const res = await app.request(`/admin/v1/reconciliations/${encodeURIComponent(handle.workflowId)}/resolution`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json', 'x-request-id': chosen },
      body: JSON.stringify({ decision: 'rejected', reason: 'not ours' }),
    });
    expect(res.status, await res.text()).toBe(200);
    const serverId = res.headers.get('x-request-id');
    expect(serverId).not.toBe(chosen);
    expect(res.headers.get('x-client-request-id')).toBe(chosen);
    const rows = await database.db.select().from(auditEvents).where(eq(auditEvents.targetId, handle.workflowId));
    const resolve = rows.find((r) => r.action === 'reconciliation.resolve');
    expect(resolve).toMatchObject({ requestId: serverId, clientRequestId: chosen, actorKeyId: alice.id });
    expect(rows.some((r) => r.requestId === chosen)).toBe(false);
  });
});
