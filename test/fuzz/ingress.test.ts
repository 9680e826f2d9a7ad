// R10 over provider webhooks (ingress, real PostgreSQL and Temporal): any body and headers, signed or not, get a
// 200 or a 4xx — never a 5xx — and a refused request leaves no row behind (receipts, registry).
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/client.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { testApp } from '../helpers/app.js';
import { TEST_DATABASE_URL } from '../helpers/env.js';
import { hmacPayload, hmacRequest, inboundTestProfile, stripeEvent, stripeRequest, terminateAll, uniqueReference } from '../helpers/inbound.js';
import { connectDevServer, uniqueTaskQueues } from '../helpers/temporal.js';
import { hostileJson, hostileString, runs, timeoutFor } from './fuzz.js';

let database: Database;
let temporal: Awaited<ReturnType<typeof connectDevServer>>;
let app: ReturnType<typeof testApp>;
// A17's per-address limit on failed verifications would turn most hostile requests into 429s: lifted here.
const { profile, stripe, hmac } = inboundTestProfile('fz', { inbound: { unverified_per_address: { per_second: 100_000, burst: 100_000 } } });

beforeAll(async () => {
  database = createDatabase(TEST_DATABASE_URL, { max: 4 });
  temporal = await connectDevServer();
  app = testApp({ db: database.db, temporal: temporal.client, taskQueues: uniqueTaskQueues('fuzz-ingress'), profile });
});
afterAll(async () => {
  if (database) {
    // The ingress starts workflows after its 200: let those starts finish before the pool closes.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const [row] = await database.db.execute<{ n: number }>(
        sql`select count(*)::int as n from webhook_receipts where provider in (${stripe}, ${hmac}) and workflow_started_at is null`,
      );
      if (row!.n === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const started = await database.db.execute<{ provider: string; provider_event_id: string }>(
      sql`select provider, provider_event_id from webhook_receipts where provider in (${stripe}, ${hmac})`,
    );
    await terminateAll(temporal.client, started.map((r) => reconciliationWorkflowId(r.provider, r.provider_event_id)));
  }
  await temporal?.close();
  await database?.close();
});

const rowsOf = async (provider: string) => {
  const [row] = await database.db.execute<{ receipts: number; registry: number }>(sql`
    select (select count(*)::int from webhook_receipts where provider = ${provider}) as receipts,
           (select count(*)::int from provider_event_registry where provider = ${provider}) as registry`);
  return row!;
};

/** Replaces one leaf of a JSON document (chosen by index) with `value`. */
function mutate(document: unknown, index: number, value: unknown): unknown {
  const leaves: { parent: Record<string, unknown>; key: string }[] = [];
  const walk = (node: unknown) => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, child] of Object.entries(node)) {
      if (typeof child === 'object' && child !== null) walk(child);
      else leaves.push({ parent: node as Record<string, unknown>, key });
    }
  };
  walk(document);
  const leaf = leaves[index % leaves.length]!;
  if (value === undefined) delete leaf.parent[leaf.key];
  else leaf.parent[leaf.key] = value;
  return document;
}

const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,24}$/);
const headerValue = fc.string({ maxLength: 200 }).map((v) => v.replace(/[\r\n\u0000]/g, ''));
const headers = fc.dictionary(fc.oneof(headerName, fc.constantFrom('stripe-signature', 'x-sandbox-signature', 'content-type', 'content-encoding')), headerValue, { maxKeys: 5 });
const anyBody = fc.oneof(hostileString, hostileJson.map((v) => JSON.stringify(v) ?? ''), fc.uint8Array({ maxLength: 2_000 }));

/** A provider's payload with one field replaced by anything (or removed), or any JSON at all. */
const payloadBody = fc.oneof(
  { weight: 4, arbitrary: fc.record({ index: fc.nat(), value: fc.oneof(hostileJson, fc.constant(undefined)) }) },
  { weight: 1, arbitrary: hostileJson.map((value) => ({ whole: value })) },
);

describe('R10 provider webhooks at the ingress', () => {
  it('R10 unsigned or wrongly signed: a 4xx and no row, whatever the body, headers or provider name', { timeout: timeoutFor(60, 200) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(stripe, hmac, 'no-such-provider', '..%2f', 'x'.repeat(300)), anyBody, headers, async (provider, body, extra) => {
        const before = await rowsOf(provider);
        const response = await app.request(`/webhooks/${provider}`, { method: 'POST', body, headers: extra });
        expect(response.status, await response.text()).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(await rowsOf(provider)).toEqual(before);
      }),
      runs(60),
    );
  });

  it('R10 correctly signed, any content: 200 with at most one receipt, or a 4xx and no row; never a 5xx', { timeout: timeoutFor(60, 300) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), payloadBody, async (useStripe, mutation) => {
        const provider = useStripe ? stripe : hmac;
        const base = useStripe ? stripeEvent() : hmacPayload({ type: 'payment.succeeded', reference: uniqueReference(), amountMinor: 1999, currency: 'EUR' });
        const document = 'whole' in mutation ? mutation.whole : mutate(JSON.parse(base.body), mutation.index, mutation.value);
        const body = JSON.stringify(document) ?? '';
        const before = await rowsOf(provider);
        const response = await app.request(`/webhooks/${provider}`, useStripe ? stripeRequest(body) : hmacRequest(body));
        const text = await response.text();
        expect(response.status, text).toBeLessThan(500);
        const after = await rowsOf(provider);
        if (response.status === 200) expect(after.receipts - before.receipts).toBeLessThanOrEqual(1);
        else expect(after, `refused with ${response.status}: ${text}`).toEqual(before);
      }),
      runs(60),
    );
  });
});
