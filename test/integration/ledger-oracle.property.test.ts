// L7: the provider is the oracle. fast-check generates per payment a sequence of provider-side actions (capture,
// partial refunds, disputes, reversals, late failures, lower amounts); the provider sandbox plays them on its books
// and sends the webhooks a real provider would: duplicated, reordered, delayed, redundant ones sometimes never.
// After the system settles and every review item is resolved by the provider's truth, each payment's ledger
// balance equals what the provider says is settled. Fixed seed; FUZZ_RUNS / FUZZ_SEED for longer runs.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reconciliations } from '../../src/db/schema/index.js';
import { reconciliationWorkflowId } from '../../src/shared/ids.js';
import { decideByTruth, providerSteps, providerTruth, resolveByTruth, scenarioArbitrary, type Webhook } from '../helpers/provider-oracle.js';
import { startProviderWorld, type ProviderWorld } from '../helpers/provider-world.js';
import { ledgerRowsFor, waitFor } from '../helpers/reconciliation.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 4);
const SEED = Number(process.env.FUZZ_SEED ?? 1313);

let world: ProviderWorld;
beforeAll(async () => {
  world = await startProviderWorld('l7', { provider_query_backoff: { initial: '100ms', multiplier: 2, maximum: '500ms' }, reconciliation_timeout: '5s' });
});
afterAll(async () => world?.close());

it(`L7 each payment's ledger balance equals the provider's final state (${RUNS} runs, seed ${SEED})`, { timeout: 60_000 + RUNS * 60_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(scenarioArbitrary, async ({ payments, choices }) => {
      const run = randomUUID().replaceAll('-', '').slice(0, 10);
      let c = 0;
      const choose = (n: number) => choices[c++ % choices.length]! % n;
      const name = (p: (typeof payments)[number]) => (p.provider === 'stripe' ? world.stripe : world.hmac);
      const refs = payments.map((_, i) => `pi_l7_${run}_${i}`);
      const steps = payments.map((p, i) => providerSteps(refs[i]!, p, `${run}${i}`));
      const sent: { provider: string; eventId: string }[] = [];
      // A webhook keeps its event id (and body) across redeliveries; a pending one goes out 1–2 times or is lost.
      let pending: { provider: string; webhook: Webhook; id: string; copies: number }[] = [];
      const send = async (one: (typeof pending)[number]) => {
        for (let i = 0; i < one.copies; i += 1) {
          const result = await world.sandbox.sendWebhook(one.provider, { ...one.webhook.event, id: one.id });
          expect(result.deliveries.map((d) => d.status)).toEqual([200]);
        }
        if (one.copies > 0) sent.push({ provider: one.provider, eventId: one.id });
      };
      const ids = () => sent.map((s) => reconciliationWorkflowId(s.provider, s.eventId));
      const rows = async () => (sent.length === 0 ? [] : world.db.select().from(reconciliations).where(inArray(reconciliations.id, ids())));
      const settled = (r: Awaited<ReturnType<typeof rows>>) => r.length === sent.length && r.every((x) => x.state !== 'received' && x.state !== 'reconciling');
      const live = steps.map(() => true);
      while (live.some(Boolean)) {
        const i = choose(payments.length);
        if (!live[i]) continue;
        const next = steps[i]!.next();
        if (next.done) {
          live[i] = false;
          continue;
        }
        world.sandbox.upsertPayment(name(payments[i]!), refs[i]!, next.value.state);
        for (const webhook of next.value.webhooks) {
          const copies = webhook.droppable && choose(4) === 0 ? 0 : 1 + choose(2);
          pending.push({ provider: name(payments[i]!), webhook, id: `evt_${randomUUID().slice(0, 18)}`, copies });
        }
        // Deliver some of what is pending now, in a random order; the rest is delayed past later actions.
        for (let k = choose(pending.length + 1); k > 0; k -= 1) await send(pending.splice(choose(pending.length), 1)[0]!);
        // Now and then the provider's next action waits until we have processed what was delivered (real time
        // passes between a capture and a refund), so reconciliations also see the provider's earlier states.
        if (choose(2) === 0) await waitFor(async () => settled(await rows()), 60_000, 'delivered webhooks to settle');
      }
      while (pending.length > 0) await send(pending.splice(choose(pending.length), 1)[0]!);
      pending = [];

      await waitFor(async () => settled(await rows()), 60_000, 'every reconciliation to settle');

      // Operators resolve every review item by the provider's truth: captures, then objects, then discrepancies.
      const order = (r: Awaited<ReturnType<typeof rows>>[number]) => (r.discrepancy ? 2 : r.eventType === 'payment.succeeded' ? 0 : 1);
      const review = (await rows()).filter((r) => r.state === 'manual_review').sort((a, b) => order(a) - order(b));
      for (const row of review) {
        const i = refs.indexOf(row.paymentReference);
        const provider = world.sandbox.getPayment(name(payments[i]!), row.paymentReference)!;
        const txns = await ledgerRowsFor(world.db, row.paymentReference);
        const posted = {
          capture: txns.some((t) => t.kind === 'payment'),
          objectIds: new Set(txns.map((t) => t.metadata.providerObjectId).filter((id): id is string => typeof id === 'string')),
        };
        await resolveByTruth(world.temporal.client, row, decideByTruth(row, provider, posted));
      }
      await waitFor(async () => (await rows()).every((r) => r.state === 'applied' || r.state === 'rejected'), 30_000, 'every review item resolved');

      for (const [i, reference] of refs.entries()) {
        const provider = world.sandbox.getPayment(name(payments[i]!), reference)!;
        const ledger = await world.settledAmount(name(payments[i]!), reference);
        expect({ reference, ledger }).toEqual({ reference, ledger: providerTruth(provider) });
        // One posting per provider object: no object id twice.
        const objectIds = (await ledgerRowsFor(world.db, reference)).map((t) => t.metadata.providerObjectId).filter(Boolean);
        expect(new Set(objectIds).size).toBe(objectIds.length);
      }
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});
