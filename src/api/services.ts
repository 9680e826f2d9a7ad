// The services the HTTP routes share, built once per app from its deps (createApp runs once per process) and
// handed to the routes typed, so every route sees the same instance with the same options.
import { createDeliveryAdmin, type DeliveryAdmin } from '../outbound/delivery-admin.js';
import type { ApiDeps } from './deps.js';

export interface ApiServices {
  /** O11–O13: delivery queries, retry and recover, an event with its deliveries. */
  deliveryAdmin: DeliveryAdmin;
}

export function createApiServices(deps: ApiDeps): ApiServices {
  return {
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
