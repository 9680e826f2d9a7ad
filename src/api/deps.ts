// What the HTTP apps are given: built once in src/workers/api.ts (or by a test), never imported globally.
import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import type { TaskQueues } from '../shared/task-queues.js';
import type { Producer } from '../kafka/types.js';
import type { DedupeCache } from '../inbound/dedupe-cache.js';
import type { ReconciliationStarter } from '../inbound/reconciliation-starter.js';
import type { ReceiptWriter } from '../inbound/receipt-writer.js';
import type { ProviderRegistry } from '../providers/index.js';

export interface ApiDeps {
  db: Db;
  temporal: Client;
  profile: Profile;
  env: Pick<Env, 'ADMIN_TOKEN' | 'SECRETS_ENCRYPTION_KEY'> &
    Partial<Pick<Env, 'NODE_ENV' | 'SECRETS_ENCRYPTION_KEY_ID' | 'SECRETS_ENCRYPTION_PREVIOUS_KEYS' | 'TEMPORAL_UI_URL' | 'TEMPORAL_NAMESPACE' | 'APIPAY_TRACE_URL'>>;
  taskQueues: TaskQueues;
  logger: Logger;
  /** Dependency checks for /readyz, by name: each resolves when its dependency answers (the API's: PostgreSQL, R5). */
  readiness: Record<string, () => Promise<unknown>>;
  /** R6, A18: false unless API_METRICS_PUBLIC (tests leave it unset: served); when served, without per-endpoint series. */
  metricsOnPublicListener?: boolean;
  /** M7: publishes `POST /admin/v1/events/trigger`'s sample events (lazily connected; absent: that route answers 503). */
  producer?: Producer;
  /** Injected clock for tests of TTLs and tolerances. */
  now?: () => Date;
  /**
   * A23: prefixes the scopes of the shared failure buckets (auth_failure_buckets). The replicas of one deployment
   * share '' (the default); tests give each app its own, so apps on one test database do not share budgets.
   */
  throttleNamespace?: string;
  /** Replaces parts of the provider ingress (receipt writer, dedupe cache, starter; null starter = sweep only). */
  ingress?: Partial<IngressServices>;
}

/** The provider ingress's collaborators (built by src/api/ingress/services.ts unless a test gives them). */
export interface IngressServices {
  providers: ProviderRegistry;
  writer: ReceiptWriter;
  cache: DedupeCache;
  /** null: leave every start to the sweep (the benchmark, and tests of I6). */
  starter: ReconciliationStarter | null;
}
