// The services the HTTP routes share, built once per app from its deps (createApp runs once per process) and
// handed to the routes typed, so every route sees the same instance with the same options.
import { createConsoleSessionStore, type ConsoleSessionStore } from '../access/console-sessions.js';
import { createFailureBuckets } from '../access/failure-buckets.js';
import { createPortalLinkService, type PortalLinkService } from '../access/portal-links.js';
import { createDeliveryAdmin, type DeliveryAdmin } from '../outbound/delivery-admin.js';
import type { ApiDeps } from './deps.js';
import { credentialThrottleFrom, type CredentialThrottle } from './middleware/credential-throttle.js';

export interface ApiServices {
  /** O11–O13: delivery queries, retry and recover, an event with its deliveries. */
  deliveryAdmin: DeliveryAdmin;
  /** A15: portal links (minted by the admin API, opened by the portal). */
  portalLinks: PortalLinkService;
  /** A16: the console's and portal's server-side sessions. */
  sessions: ConsoleSessionStore;
  /** A17, A23: one budget of failed credentials per address and key, shared by the admin API, the sign-in forms and the replicas. */
  throttle: CredentialThrottle;
}

export function createApiServices(deps: ApiDeps): ApiServices {
  const clock = deps.now ? { now: deps.now } : {};
  return {
    portalLinks: createPortalLinkService({ db: deps.db, ...clock }),
    sessions: createConsoleSessionStore({ db: deps.db, ...clock }),
    throttle: credentialThrottleFrom(
      deps.profile,
      createFailureBuckets({ db: deps.db, namespace: deps.throttleNamespace ?? '' }),
    ),
    deliveryAdmin: createDeliveryAdmin({
      db: deps.db,
      temporal: deps.temporal,
      taskQueue: deps.taskQueues.delivery,
      retryScheduleMs: deps.profile.outbound.retry_schedule,
      reviewWindowMs: deps.profile.outbound.review_window,
      ...(deps.now ? { now: deps.now } : {}),
    }),
  };
}
