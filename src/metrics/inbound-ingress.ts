// Ingress-side inbound metrics (I13): acknowledgements apart from ledger success (src/metrics/inbound-ledger.ts),
// rejections by cause, duplicates by who answered, ack latency, group-commit batches and workflow starts.
import { Histogram } from 'prom-client';
import { counter, registry } from './registry.js';

/** Provider label: only names from the profile, so a caller cannot grow the label set (unknown → "unknown"). */
export const ingressMetrics = {
  acknowledged: counter(
    'apipay_inbound_webhooks_acknowledged_total',
    'Provider webhooks answered 200 after their receipt was durable (result: new | duplicate | ignored).',
    ['provider', 'result'],
  ),
  signatureRejections: counter(
    'apipay_inbound_signature_rejections_total',
    'Webhooks refused with 401 (I3), by reason: missing, malformed, mismatch, stale or future timestamp.',
    ['provider', 'reason'],
  ),
  duplicates: counter(
    'apipay_inbound_duplicates_total',
    'Duplicate provider events acknowledged without change (I5), by who answered: cache or registry.',
    ['provider', 'source'],
  ),
  bodyTooLarge: counter(
    'apipay_inbound_body_too_large_total',
    'Webhooks refused with 413 because the body exceeded inbound.max_body_bytes.',
    ['provider'],
  ),
  rejected: counter(
    'apipay_inbound_webhooks_rejected_total',
    'Webhooks refused before storage for other bad input, by reason (unknown_provider, content_type, invalid_utf8, invalid_json, invalid_fields, rate_limited, unverified_rate_limited).',
    ['provider', 'reason'],
  ),
  overloaded: counter(
    'apipay_inbound_webhooks_unavailable_total',
    'Webhooks answered 503 + Retry-After instead of 200, so not acknowledged (R5), by reason: queue_full, deadline (commit slower than inbound.receipt_commit_deadline), commit_failed.',
    ['provider', 'reason'],
  ),
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
  workflowStarts: counter(
    'apipay_inbound_workflow_starts_total',
    'Reconciliation workflow starts (I6) by path (ingress | sweep) and result (started | already_started | failed | deferred: left to the sweep after waiting too long, P3).',
    ['via', 'result'],
  ),
};
