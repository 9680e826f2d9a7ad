// The catalog's JSON Schema files (M8), one import each so that tsc copies them into dist/ and the registry needs no
// file system at run time. test/unit/catalog.test.ts fails when a file in this folder is missing here.
import dispute_created_v1 from './dispute.created.v1.json' with { type: 'json' };
import dispute_funds_withdrawn_v1 from './dispute.funds_withdrawn.v1.json' with { type: 'json' };
import endpoint_disabled_v1 from './endpoint.disabled.v1.json' with { type: 'json' };
import endpoint_enabled_v1 from './endpoint.enabled.v1.json' with { type: 'json' };
import payment_adjusted_v1 from './payment.adjusted.v1.json' with { type: 'json' };
import payment_failed_v1 from './payment.failed.v1.json' with { type: 'json' };
import payment_pending_v1 from './payment.pending.v1.json' with { type: 'json' };
import payment_reversed_v1 from './payment.reversed.v1.json' with { type: 'json' };
import payment_settled_v1 from './payment.settled.v1.json' with { type: 'json' };
import payment_succeeded_v1 from './payment.succeeded.v1.json' with { type: 'json' };
import ping_v1 from './ping.v1.json' with { type: 'json' };
import refund_created_v1 from './refund.created.v1.json' with { type: 'json' };
import refund_settled_v1 from './refund.settled.v1.json' with { type: 'json' };
import refund_succeeded_v1 from './refund.succeeded.v1.json' with { type: 'json' };

/** Every schema file of the catalog, by file name. */
export const SCHEMA_FILES: Record<string, unknown> = {
  'dispute.created.v1.json': dispute_created_v1,
  'dispute.funds_withdrawn.v1.json': dispute_funds_withdrawn_v1,
  'endpoint.disabled.v1.json': endpoint_disabled_v1,
  'endpoint.enabled.v1.json': endpoint_enabled_v1,
  'payment.adjusted.v1.json': payment_adjusted_v1,
  'payment.failed.v1.json': payment_failed_v1,
  'payment.pending.v1.json': payment_pending_v1,
  'payment.reversed.v1.json': payment_reversed_v1,
  'payment.settled.v1.json': payment_settled_v1,
  'payment.succeeded.v1.json': payment_succeeded_v1,
  'ping.v1.json': ping_v1,
  'refund.created.v1.json': refund_created_v1,
  'refund.settled.v1.json': refund_settled_v1,
  'refund.succeeded.v1.json': refund_succeeded_v1,
};
