// I15: Stripe itself as a provider (scheme stripe_api), end to end on the real PostgreSQL and Temporal: a genuine
// Stripe event object, its payment intent as stripe-mock (Stripe's own API mock) returns it, POSTed to the ingress with
// a signature made by Stripe's library, is stored and reconciled by a workflow whose payments query goes through the
// official SDK to stripe-mock; a bad signature is a 401 that stores nothing; the API key is in no log line, no row and
// no workflow answer, even when Stripe's error message repeats it. STRIPE_MOCK_URL (scripts/test.sh sets it when
// scripts/stack.sh runs stripe-mock) says where stripe-mock is; without it these tests are skipped, saying why.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { reconciliations } from '../../src/db/schema/index.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { reconciliationStateQuery } from '../../src/shared/inbound.js';
import { testApp } from '../helpers/app.js';
import { terminateAll } from '../helpers/inbound.js';
import { testProfile } from '../helpers/profile.js';
import { waitFor } from '../helpers/wait.js';
import { useWorld } from '../helpers/world.js';
import { capturedLogger } from '../helpers/capture.js';

const STRIPE_MOCK_URL = process.env.STRIPE_MOCK_URL;
if (!STRIPE_MOCK_URL)
  console.warn('[stripe-provider] skipped: STRIPE_MOCK_URL is not set (scripts/stack.sh runs stripe-mock; see docs/inbound.md)');

const suffix = randomUUID().slice(0, 6);
const STRIPE = `stripe-${suffix}`;
const BAD_KEY_STRIPE = `stripe-badkey-${suffix}`;
const WEBHOOK_SECRET = `whsec_stripe_it_${randomUUID().replaceAll('-', '')}`;
// stripe-mock accepts any key that looks like a test-mode secret key; the second one it refuses (401) and repeats.
const API_KEY = `sk_test_it${randomUUID().replaceAll('-', '')}`;
const BAD_KEY = `apipay_not_a_key_${randomUUID().replaceAll('-', '')}`;
process.env.STRIPE_IT_WEBHOOK_SECRET = WEBHOOK_SECRET;
process.env.STRIPE_IT_API_KEY = API_KEY;
process.env.STRIPE_IT_BAD_KEY = BAD_KEY;

const entry = (apiKeyEnv: string) => ({
  scheme: 'stripe_api',
  secret_ref: 'env:STRIPE_IT_WEBHOOK_SECRET',
  api_key_ref: `env:${apiKeyEnv}`,
  api_base_url: STRIPE_MOCK_URL ?? 'http://127.0.0.1:9',
});
const profile = testProfile({
  inbound: {
    providers: { [STRIPE]: entry('STRIPE_IT_API_KEY'), [BAD_KEY_STRIPE]: entry('STRIPE_IT_BAD_KEY') },
    provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
  },
});

// Every line the app and the workers log in this file.
const { logger, lines } = capturedLogger('stripe-it');

const world = useWorld({ label: 'stripe-provider', workers: { profile, logger } });
const started = new Set<string>();
afterAll(() => terminateAll(world.temporal.client, started));

const sdk = () => {
  const url = new URL(STRIPE_MOCK_URL!);
  return new Stripe(API_KEY, {
    protocol: url.protocol === 'http:' ? 'http' : 'https',
    host: url.hostname,
    port: Number(url.port),
    maxNetworkRetries: 0,
  });
};

/** A Stripe event object around `object`, as Stripe sends it (object, api_version, pending_webhooks, request). */
function stripeEventBody(type: string, object: unknown): { id: string; body: string } {
  const id = `evt_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
  const event = {
    id,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
  return { id, body: JSON.stringify(event) };
}

function post(provider: string, body: string, secret = WEBHOOK_SECRET) {
  const app = testApp({ db: world.db, temporal: world.temporal.client, profile, taskQueues: world.taskQueues, logger });
  const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret });
  return app.request(`/webhooks/${provider}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
  });
}

const rowOf = async (provider: string, eventId: string) =>
  (
    await world.db
      .select()
      .from(reconciliations)
      .where(eq(reconciliations.id, reconciliationWorkflowId(provider, eventId)))
  )[0];
const settled = (provider: string, eventId: string) =>
  waitFor(
    async () => {
      const row = await rowOf(provider, eventId);
      return row && row.state !== 'received' && row.state !== 'reconciling' ? row : undefined;
    },
    60_000,
    `reconciliation of ${eventId}`,
  );

describe.skipIf(!STRIPE_MOCK_URL)('I15 Stripe through the SDK and stripe-mock', () => {
  it('I15 a payment_intent.succeeded event is stored and reconciled against the intent stripe-mock returns', async () => {
    const reference = `pi_it${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    // The intent as Stripe's API returns it (stripe-mock echoes the id), as it would be once it succeeded.
    const intent = await sdk().paymentIntents.retrieve(reference);
    const { id, body } = stripeEventBody('payment_intent.succeeded', {
      ...intent,
      status: 'succeeded',
      amount_received: intent.amount,
      last_payment_error: null,
    });
    started.add(reconciliationWorkflowId(STRIPE, id));
    const response = await post(STRIPE, body);
    expect(response.status).toBe(200);
    const [receipt] = await world.db.execute<{ raw: Buffer }>(
      sql`select raw_body as raw from webhook_receipts where provider = ${STRIPE} and provider_event_id = ${id}`,
    );
    expect(Buffer.from(receipt!.raw).toString()).toBe(body); // I2: the exact bytes Stripe sent
    const row = await settled(STRIPE, id);
    // The provider's side of the row can only have come from stripe-mock through the SDK: its fixture intent is
    // 1099 usd, returned to requires_payment_method after a failed attempt, so Stripe says "failed": nothing credited.
    expect(row).toMatchObject({
      paymentReference: reference,
      amountMinor: BigInt(intent.amount),
      currency: intent.currency.toUpperCase(),
      state: 'rejected',
    });
    expect(row.providerAmountMinor).toBe(1099n);
    expect(row.providerCurrency).toBe('USD');
    expect(row.reason).toContain('provider reports failed');
  });

  it("I15 a payment_intent.payment_failed event as stripe-mock gives the intent is declined by Stripe's answer", async () => {
    const intent = await sdk().paymentIntents.retrieve(`pi_it${randomUUID().replaceAll('-', '').slice(0, 20)}`);
    const { id, body } = stripeEventBody('payment_intent.payment_failed', intent);
    started.add(reconciliationWorkflowId(STRIPE, id));
    expect((await post(STRIPE, body)).status).toBe(200);
    expect(await settled(STRIPE, id)).toMatchObject({
      eventType: 'payment.failed',
      state: 'rejected',
      reason: expect.stringContaining('provider reports failed'),
    });
  });

  it('I3 a Stripe event signed with another secret is a 401 and stores nothing', async () => {
    const intent = await sdk().paymentIntents.retrieve(`pi_it${randomUUID().replaceAll('-', '').slice(0, 20)}`);
    const { id, body } = stripeEventBody('payment_intent.succeeded', intent);
    expect((await post(STRIPE, body, 'whsec_someone_else')).status).toBe(401);
    const [stored] = await world.db.execute<{ n: number }>(
      sql`select count(*)::int as n from provider_event_registry where provider = ${STRIPE} and provider_event_id = ${id}`,
    );
    expect(stored!.n).toBe(0);
  });

  it('I15 the API key is in no log line, row or workflow answer, even when Stripe refuses it and repeats it', async () => {
    const intent = await sdk().paymentIntents.retrieve(`pi_it${randomUUID().replaceAll('-', '').slice(0, 20)}`);
    const { id, body } = stripeEventBody('payment_intent.succeeded', {
      ...intent,
      status: 'succeeded',
      amount_received: intent.amount,
    });
    const workflowId = reconciliationWorkflowId(BAD_KEY_STRIPE, id);
    started.add(workflowId);
    expect((await post(BAD_KEY_STRIPE, body)).status).toBe(200);
    // stripe-mock answers the refused key 401 with a message that repeats the Authorization header it got.
    const progress = await waitFor(
      async () => {
        const p = await world.temporal.client.workflow
          .getHandle(workflowId)
          .query(reconciliationStateQuery)
          .catch(() => undefined);
        return p && p.providerQueries >= 2 ? p : undefined;
      },
      30_000,
      'two refused queries',
    );
    expect(progress.reason).toMatch(/provider_error: stripe answered 401/);
    const row = await rowOf(BAD_KEY_STRIPE, id);
    const everything = [
      ...lines,
      JSON.stringify(progress),
      JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
    ].join('\n');
    expect(lines.some((l) => l.includes('stripe answered 401'))).toBe(true); // the refusal was logged, without the key
    for (const key of [API_KEY, BAD_KEY]) {
      for (const form of [key, Buffer.from(`${key}:`).toString('base64'), Buffer.from(key).toString('base64')])
        expect(everything).not.toContain(form);
    }
  });
});
