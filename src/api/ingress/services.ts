// The ingress's collaborators, built once per app from its deps; tests and the benchmark replace any of them.
import type { ApiDeps, IngressServices } from '../deps.js';
import { createDedupeCache } from '../../inbound/dedupe-cache.js';
import { backlogGate } from '../../inbound/backlog-gate.js';
import { createReconciliationStarter } from '../../inbound/reconciliation-starter.js';
import { startRateLimiter } from '../../inbound/start-rate.js';
import { createGroupCommitWriter } from '../../inbound/receipt-writer.js';
import { ingressMetrics } from '../../metrics/inbound-ingress.js';
import { createProviderRegistry } from '../../providers/index.js';

export type { IngressServices };

const DAY_MS = 86_400_000;

export function createIngressServices(deps: ApiDeps): IngressServices {
  const given = deps.ingress ?? {};
  return {
    providers: given.providers ?? createProviderRegistry(deps.profile.inbound.providers),
    writer:
      given.writer ??
      createGroupCommitWriter({
        db: deps.db,
        maxPending: deps.profile.inbound.receipt_queue_max,
        maxPendingBytes: deps.profile.inbound.receipt_queue_max_bytes,
        deadlineMs: deps.profile.inbound.receipt_commit_deadline,
        onCommit: (size) => ingressMetrics.commitBatchSize.observe(size),
      }),
    cache:
      given.cache ??
      createDedupeCache({
        ttlMs: deps.profile.inbound.dedupe_store_ttl_days * DAY_MS,
        now: deps.now ? () => deps.now!().getTime() : undefined,
      }),
    starter:
      given.starter !== undefined
        ? given.starter
        : createReconciliationStarter({
            db: deps.db,
            temporal: deps.temporal,
            profile: deps.profile,
            taskQueue: deps.taskQueues.reconciliation,
            logger: deps.logger,
            // P3: what waited past half the sweep's grace is the sweep's, so the two do not start one receipt twice.
            maxWaitMs: deps.profile.inbound.unstarted_grace / 2,
            rate: startRateLimiter(deps.profile.inbound.reconciliation_start_rate),
            gate: backlogGate({
              temporal: deps.temporal,
              taskQueue: deps.taskQueues.reconciliation,
              max: deps.profile.inbound.reconciliation_backlog_max,
              logger: deps.logger,
            }),
          }),
  };
}
