// P1 with M2, M3 and M5: in batched mode the fan-out hands the dispatcher only deliveries it may send itself. An
// endpoint with per-endpoint ordering, a throttle, or in the slow lane (failing) gets its delivery workflow from
// attempt 1, since the batched path neither orders nor throttles. Real PostgreSQL.
import { eq, inArray } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { deliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { parseEnvelope, type ValidEvent } from '../../src/outbound/envelope.js';
import { fanOut, type Positioned } from '../../src/dispatcher/fan-out.js';
import { envelope, insertEndpoint, uniqueMerchant } from '../helpers/outbound.js';
import { testProfile } from '../helpers/profile.js';
import { useWorld } from '../helpers/world.js';

let database: Database;
const world = useWorld({ label: 'batched-routing' });
beforeAll(() => {
  database = world.database;
});

function positioned(merchantAccount: string): Positioned<ValidEvent> {
  const value = Buffer.from(JSON.stringify(envelope({ merchantAccount })));
  const parsed = parseEnvelope(value);
  if (!parsed.ok) throw new Error(`test envelope refused: ${parsed.reason}`);
  const message = { topic: 't', partition: 0, offset: '0', key: null, value, timestamp: '0', headers: {} };
  return { message, value: parsed.event };
}

describe('P1 batched routing', () => {
  it('P1 hands the dispatcher only plain endpoints; ordered, throttled and failing ones go to their workflow', async () => {
    const lanes = testProfile().outbound.lanes;
    const merchantAccount = uniqueMerchant('route');
    const url = 'https://merchant.example/hooks';
    const plain = await insertEndpoint(database.db, { merchantAccount, url });
    const ordered = await insertEndpoint(database.db, { merchantAccount, url });
    const throttled = await insertEndpoint(database.db, { merchantAccount, url });
    const failing = await insertEndpoint(database.db, { merchantAccount, url });
    await database.db.update(webhookEndpoints).set({ ordering: 'per_endpoint' }).where(eq(webhookEndpoints.id, ordered.id));
    await database.db.update(webhookEndpoints).set({ rateLimitPerSecond: 5 }).where(eq(webhookEndpoints.id, throttled.id));
    await database.db
      .update(webhookEndpoints)
      .set({ consecutiveFailures: lanes.slow_after_failures })
      .where(eq(webhookEndpoints.id, failing.id));

    const outcome = await fanOut(database.db, [], [positioned(merchantAccount)], { handoff: true, lanes });
    const handedOff = new Map(outcome.toStart.map((d) => [d.endpointId, d.handoff !== undefined]));
    expect(Object.fromEntries(handedOff)).toEqual({
      [plain.id]: true,
      [ordered.id]: false,
      [throttled.id]: false,
      [failing.id]: false,
    });
    const rows = await database.db
      .select({ endpointId: deliveries.endpointId, handoffSince: deliveries.handoffSince })
      .from(deliveries)
      .where(inArray(deliveries.endpointId, [plain.id, ordered.id, throttled.id, failing.id]));
    // P13: every one carries the hand-off marker (the workflow starts run behind the offsets; the sweep covers a
    // crash), and the ones that need their workflow from attempt 1 are marked as owed one (priorAttempts 0).
    expect(rows.every((r) => r.handoffSince !== null)).toBe(true);
    expect(outcome.toStart.filter((d) => d.handoff === undefined).map((d) => d.priorAttempts)).toEqual([0, 0, 0]);
  });
});
