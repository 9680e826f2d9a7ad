// Outbound delivery metrics (dispatcher and worker): final statuses, attempts, retries, disables, quarantine.
import { Counter, Histogram } from 'prom-client';
import { registry } from './registry.js';

export const deliveriesFinished = new Counter({
  name: 'apipay_outbound_deliveries_total',
  help: 'Deliveries that reached a final status of their cycle (DELIVERED or FAILED)',
  labelNames: ['status'],
  registers: [registry],
});

/** P13: deliveries the fan-out parked because their endpoint's circuit was open (src/outbound/circuit.ts). */
export const deliveriesParked = new Counter({
  name: 'apipay_outbound_deliveries_parked_total',
  help: 'Deliveries parked at fan-out for an endpoint whose circuit is open (P13)',
  registers: [registry],
});

/** P23: failed first attempts parked at once (their endpoint parks), with no workflow until the probe releases them. */
export const failedAttemptsParked = new Counter({
  name: 'apipay_outbound_failed_attempts_parked_total',
  help: 'First attempts that failed to an endpoint whose circuit is open, parked with no workflow until its probe releases them (P23)',
  registers: [registry],
});

export const deliveriesCreated = new Counter({
  name: 'apipay_outbound_deliveries_created_total',
  help: 'Delivery rows created by the dispatcher fan-out (O4)',
  registers: [registry],
});

export const eventsDispatched = new Counter({
  name: 'apipay_outbound_events_total',
  help: 'Valid events read from Kafka, by whether they were new or a duplicate (O3)',
  labelNames: ['result'],
  registers: [registry],
});

export const attemptsTotal = new Counter({
  name: 'apipay_outbound_attempts_total',
  help: 'Delivery attempts by outcome: success or the error kind',
  labelNames: ['outcome'],
  registers: [registry],
});

export const attemptLatency = new Histogram({
  name: 'apipay_outbound_attempt_latency_seconds',
  help: 'Time from sending the POST to the merchant response (or the failure)',
  labelNames: ['outcome'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const retriesScheduled = new Counter({
  name: 'apipay_outbound_retries_scheduled_total',
  help: 'Failed attempts followed by a durable backoff timer (status RETRYING)',
  registers: [registry],
});

export const endpointsDisabled = new Counter({
  name: 'apipay_outbound_endpoints_disabled_total',
  help: 'Endpoints disabled automatically after failing for outbound.auto_disable_after (O13)',
  registers: [registry],
});

export const schemaRefusals = new Counter({
  name: 'apipay_outbound_schema_refusals_total',
  help: 'Events refused before fan-out by the catalog check (O21), by reason and type (catalog types only; others are `unknown`)',
  labelNames: ['reason', 'type'],
  registers: [registry],
});

export const versionSkips = new Counter({
  name: 'apipay_outbound_version_skips_total',
  help: 'Endpoints that subscribe to an event type in another version than the event (M9): not delivered to them, by type and version',
  labelNames: ['type', 'version'],
  registers: [registry],
});

export const messagesQuarantined = new Counter({
  name: 'apipay_outbound_quarantined_messages_total',
  help: 'Kafka messages set aside as malformed envelopes (O2), by reason',
  labelNames: ['reason'],
  registers: [registry],
});

export const attemptsDeferred = new Counter({
  name: 'apipay_outbound_attempts_deferred_total',
  help: "Attempts not sent yet, by why: slow_lane (M2), predecessor (M3 ordering), throttle (M5), parked (P15: a retry its endpoint's circuit parked); no attempt is counted",
  labelNames: ['reason'],
  registers: [registry],
});

/** O19: event bodies the retention sweep expunged (an admin's expunge is in the audit log instead). */
export const bodiesExpunged = new Counter({
  name: 'apipay_outbound_bodies_expunged_total',
  help: 'Outbound event bodies removed by the retention sweep after retention.bodies (O19)',
  registers: [registry],
});
