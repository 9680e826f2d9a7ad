// Ingress-side inbound metrics (I13): acknowledgements apart from ledger success (src/metrics/inbound-ledger.ts),
// rejections by cause, duplicates by who answered, ack latency, group-commit batches and workflow starts.
import { Counter, Histogram } from 'prom-client';
import { registry } from './registry.js';

/** Provider label: only names from the profile, so a caller cannot grow the label set (unknown → "unknown"). */
export const ingressMetrics = {
  acknowledged: new Counter({
    name: 'apipay_inbound_webhooks_acknowledged_total',
    help: 'Provider webhooks answered 200 after their receipt was durable (result: new | duplicate | ignored).',
    labelNames: ['provider', 'result'] as const,
    registers: [registry],
  }),
  signatureRejections: new Counter({
    name: 'apipay_inbound_signature_rejections_total',
    help: 'Webhooks refused with 401 (I3), by reason: missing, malformed, mismatch, stale or future timestamp.',
    labelNames: ['provider', 'reason'] as const,
    registers: [registry],
  }),
  duplicates: new Counter({
    name: 'apipay_inbound_duplicates_total',
    help: 'Duplicate provider events acknowledged without change (I5), by who answered: cache or registry.',
    labelNames: ['provider', 'source'] as const,
    registers: [registry],
  }),
  bodyTooLarge: new Counter({
    name: 'apipay_inbound_body_too_large_total',
    help: 'Webhooks refused with 413 because the body exceeded inbound.max_body_bytes.',
    labelNames: ['provider'] as const,
    registers: [registry],
  }),
  rejected: new Counter({
    name: 'apipay_inbound_webhooks_rejected_total',
    help: 'Webhooks refused before storage for other bad input, by reason (unknown_provider, content_type, invalid_utf8, invalid_json, invalid_fields).',
    labelNames: ['provider', 'reason'] as const,
    registers: [registry],
  }),
  overloaded: new Counter({
    name: 'apipay_inbound_webhooks_unavailable_total',
    help: 'Webhooks answered 503 + Retry-After instead of 200, so not acknowledged (R5), by reason: queue_full, deadline (commit slower than inbound.receipt_commit_deadline), commit_failed.',
    labelNames: ['provider', 'reason'] as const,
    registers: [registry],
  }),
  ackLatency: new Histogram({
    name: 'apipay_inbound_ack_latency_seconds',
    help: 'From the first byte read to the 200, including the durable commit.',
    labelNames: ['provider'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  }),
  commitBatchSize: new Histogram({
    name: 'apipay_inbound_receipt_commit_batch_size',
    help: 'New receipts per group-commit transaction.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [registry],
  }),
  workflowStarts: new Counter({
    name: 'apipay_inbound_workflow_starts_total',
    help: 'Reconciliation workflow starts (I6) by path (ingress | sweep) and result (started | already_started | failed).',
    labelNames: ['via', 'result'] as const,
    registers: [registry],
  }),
};
