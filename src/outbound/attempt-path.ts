// O7, O13, O18, P1: the one attempt path both delivery modes share — the per-delivery activity
// (src/activities/delivery.ts) and the batched dispatcher's first attempts (src/outbound/first-attempts.ts). It
// builds the attempt store and the sender from the profile once, and counts and logs every recorded attempt and what
// it led to (retry scheduled, finished, endpoint disabled by a 410 or by O13's streak, announced as a status change,
// M4) the same way in both, so a merchant's answer costs the same rows, metrics and log lines whichever mode sent it.
// A destination other than HTTP plugs in here (issue 32).
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import { attemptLatency, attemptsTotal, deliveriesFinished, endpointsDisabled, retriesScheduled } from '../metrics/outbound.js';
import { endpointStatusChanges } from '../metrics/outbox.js';
import type { SecretKeys } from '../shared/keyring.js';
import type { AttemptOutcome } from './attempt-record.js';
import { createAttemptStore, type Applied } from './attempt-store.js';
import { outboundAgents, type PinnedAgents } from './pinned-agents.js';
import { lastWait } from './retry-policy.js';
import { createSender } from './sender.js';
import type { LookupAll } from './url-safety.js';

export interface AttemptPathDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  secretsKey: SecretKeys;
  /** Resolver for the send-time URL check (O15); default the system resolver. */
  lookup?: LookupAll;
  /** Where POSTs connect (O15: only to the vetted addresses); default the process's shared pool. */
  agents?: PinnedAgents;
}

export function createAttemptPath(deps: AttemptPathDeps) {
  const { db, profile, logger } = deps;
  const outbound = profile.outbound;
  const attempts = createAttemptStore({
    db,
    logger,
    autoDisableAfterMs: outbound.auto_disable_after,
    lastRetryWaitMs: lastWait(outbound.retry_schedule),
    recovery: outbound.recovery, // P12
  });
  const sender = createSender({
    db,
    secretsKey: deps.secretsKey,
    agents: deps.agents ?? outboundAgents,
    timeoutMs: outbound.request_timeout,
    excerptBytes: outbound.response_excerpt_bytes,
    allowInsecureUrls: outbound.allow_insecure_urls,
    lookup: deps.lookup,
  });

  /** The attempt counter and latency histogram, by outcome. */
  function counted(recorded: AttemptOutcome): void {
    const outcome = recorded.succeeded ? 'success' : (recorded.errorKind ?? 'unknown');
    attemptsTotal.inc({ outcome });
    attemptLatency.observe({ outcome }, recorded.latencyMs / 1000);
  }

  /** One recorded attempt: counted, what it led to counted, an endpoint it disabled logged and counted, one debug line. */
  function observed(
    attempt: { deliveryId: string; attemptNumber: number },
    endpointId: string,
    { recorded, status, disabledNow }: Pick<Applied, 'recorded' | 'status' | 'disabledNow'>,
  ): void {
    counted(recorded);
    if (status === 'RETRYING') retriesScheduled.inc();
    else deliveriesFinished.inc({ status });
    if (disabledNow) {
      endpointsDisabled.inc();
      endpointStatusChanges.inc({ to: 'disabled', actor: 'system' }); // M4: announced as endpoint.disabled
      logger.warn(
        { endpointId, deliveryId: attempt.deliveryId, status: recorded.responseStatus },
        recorded.responseStatus === 410
          ? 'endpoint disabled: it answered 410 Gone (O18)'
          : 'endpoint auto-disabled: every attempt failed for outbound.auto_disable_after (O13)',
      );
    }
    logger.debug(
      {
        deliveryId: attempt.deliveryId,
        attempt: attempt.attemptNumber,
        status: recorded.responseStatus,
        errorKind: recorded.errorKind,
        latencyMs: recorded.latencyMs,
        deliveryStatus: status,
      },
      'delivery attempt',
    );
  }

  return { attempts, sender, counted, observed };
}

export type AttemptPath = ReturnType<typeof createAttemptPath>;
