// M1, M4: the outbox relay (published, failures, and its lag as the unpublished count and the oldest row's age,
// set by the relay loop itself so a scrape runs no query, R6) and endpoint status changes.
import { Gauge } from 'prom-client';
import { counter, registry } from './registry.js';

export const outboxPublished = counter(
  'apipay_outbox_published_total',
  'Outbox events published to Kafka and marked (M1)',
  [] as const,
);
export const outboxPublishFailures = counter(
  'apipay_outbox_publish_failures_total',
  'Relay cycles that failed (Kafka or PostgreSQL unreachable); retried with backoff (M1)',
  [] as const,
);
export const outboxUnpublished = new Gauge({
  name: 'apipay_outbox_unpublished_events',
  help: 'Outbox rows not yet acknowledged by Kafka, as the relay last counted them (M1)',
  registers: [registry],
});
export const outboxOldestAge = new Gauge({
  name: 'apipay_outbox_oldest_unpublished_age_seconds',
  help: 'Age of the oldest unpublished outbox row: the relay lag (M1)',
  registers: [registry],
});
export const endpointStatusChanges = counter(
  'apipay_outbound_endpoint_status_changes_total',
  'Endpoint status changes recorded and announced (M4)',
  ['to', 'actor'] as const,
);
