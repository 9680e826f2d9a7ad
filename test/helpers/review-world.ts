// A5, A11, A14, A24, A27 (issue 31, item 6): the world of the files that steer a payment parked in manual_review —
// the shared test world plus a payments peer answering for a Stripe-scheme provider of the file's own, workers on
// the file's queues with the file's profile, and the admin app over them. `parked()` starts a reconciliation whose
// provider reports one minor unit less than the webhook, and waits for manual_review. Each file asked for this set-up
// in 30 copied lines; the copies had begun to differ only where the file meant them to (its inbound settings).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { Profile } from '../../src/config/profile.js';
import { reconciliationStateQuery, type NormalizedProviderEvent } from '../../src/shared/inbound.js';
import { testApp } from './app.js';
import { testProfile } from './profile.js';
import { providerEvent, startPaymentsPeer, startReconciliation, succeeded, waitFor } from './reconciliation.js';
import { startWorkers, testActivities, uniqueTaskQueues } from './temporal.js';
import { useWorld, type World } from './world.js';

export interface ReviewWorldOptions {
  label: string;
  /** The profile's inbound settings beside the file's provider (e.g. resolution_via_temporal, dual_control_above). */
  inbound?: Record<string, unknown>;
  /** The rest of the profile (e.g. `idp`), read when the world starts so it may depend on other beforeAll work. */
  profile?: () => Record<string, unknown>;
}

export interface ReviewWorld {
  world: World;
  /** This file's provider name (a Stripe-scheme provider whose payments API is `peer`). */
  provider: string;
  peer: Awaited<ReturnType<typeof startPaymentsPeer>>;
  profile: Profile;
  taskQueues: World['taskQueues'];
  app: ReturnType<typeof testApp>;
  /** Starts a reconciliation of `event` from this file's provider on the file's queues (the peer answers as set). */
  start(event: NormalizedProviderEvent): ReturnType<typeof startReconciliation>;
  /** A payment of `amountMinor` in `currency` waiting in manual_review; `path` is its admin API resource. */
  parked(amountMinor: string, currency?: string): Promise<Parked>;
}

export type Parked = Awaited<ReturnType<typeof parkedIn>>;

async function parkedIn(review: ReviewWorld, amountMinor: string, currency = 'EUR') {
  const event = providerEvent({ amountMinor, currency });
  review.peer.set(event.paymentReference, succeeded(event, { amountMinor: String(Number(amountMinor) - 1) }));
  const handle = await review.start(event);
  await waitFor(async () => (await handle.query(reconciliationStateQuery)).state === 'manual_review', 60_000, 'manual_review');
  return { event, handle, id: handle.workflowId, path: `/reconciliations/${encodeURIComponent(handle.workflowId)}` };
}

/** Registers the hooks; the returned object's parts are ready inside tests and later hooks. */
export function useReviewWorld(options: ReviewWorldOptions): ReviewWorld {
  const world = useWorld({ label: options.label });
  const taskQueues = uniqueTaskQueues(options.label);
  const provider = `${options.label.slice(0, 12)}-${randomUUID().slice(0, 8)}`;
  const review = { world, provider, taskQueues } as ReviewWorld;
  let stopWorkers: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    review.peer = await startPaymentsPeer();
    review.profile = testProfile({
      ...options.profile?.(),
      inbound: {
        ...options.inbound,
        providers: {
          [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: review.peer.baseUrl },
        },
        provider_query_backoff: { initial: '200ms', multiplier: 2, maximum: '1s' },
      },
    });
    const { database, temporal } = world;
    const activities = testActivities(database.db, { profile: review.profile });
    stopWorkers = (await startWorkers({ connection: temporal.native, taskQueues, activities })).stop;
    review.app = testApp({ db: database.db, temporal: temporal.client, profile: review.profile, taskQueues });
  });
  afterAll(async () => {
    await stopWorkers?.();
    await review.peer?.close();
  });
  review.start = (event) =>
    startReconciliation(world.temporal.client, review.profile, taskQueues.reconciliation, event, { provider });
  review.parked = (amountMinor, currency) => parkedIn(review, amountMinor, currency);
  return review;
}
