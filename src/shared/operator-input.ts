// R2: operator input checked where it enters (admin API schema, CLI, the workflow's update validator and
// signal handler): text PostgreSQL can store, bounded, and a resolution whose parts fit together. Pure: the
// workflow imports it.
import { RESOLUTION_DECISIONS, type OperatorResolution } from './inbound.js';

export const OPERATOR_MAX = 200;
export const REASON_MAX = 1000;

// A UTF-16 surrogate without its pair cannot be encoded as UTF-8, so PostgreSQL refuses it like U+0000.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `value` is not storable operator text, or null. Counted in code points after trimming. */
export function textProblem(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return 'must be a string';
  const text = value.trim();
  if (text === '') return 'is required';
  if (text.includes('\u0000')) return 'must not contain U+0000';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone UTF-16 surrogate';
  if ([...text].length > max) return `must be at most ${max} characters`;
  return null;
}

export const AMOUNT_MINOR = /^[1-9]\d{0,17}$/; // positive, fits a bigint
export const CURRENCY = /^[A-Z]{3}$/;

/** Why this resolution is malformed (field named first), or null. State checks are the workflow's. */
export function resolutionInputProblem(resolution: unknown): string | null {
  if (typeof resolution !== 'object' || resolution === null) return 'resolution must be an object';
  const r = resolution as Partial<OperatorResolution>;
  if (!RESOLUTION_DECISIONS.includes(r.decision as never)) return `decision must be one of ${RESOLUTION_DECISIONS.join(', ')}`;
  const operator = textProblem(r.operator, OPERATOR_MAX);
  if (operator) return `operator ${operator}`;
  const reason = textProblem(r.reason, REASON_MAX);
  if (reason) return `reason ${reason}`;
  if (r.post === undefined) return null;
  if (r.decision !== 'applied') return 'post is only for an applied decision';
  if (r.post === 'provider' || r.post === 'webhook') return null;
  if (typeof r.post !== 'object' || r.post === null) return 'post must be provider, webhook or { amountMinor, currency }';
  if (typeof r.post.amountMinor !== 'string' || !AMOUNT_MINOR.test(r.post.amountMinor)) return 'post.amountMinor must be positive minor units (at most 18 digits)';
  if (typeof r.post.currency !== 'string' || !CURRENCY.test(r.post.currency)) return 'post.currency must be an ISO 4217 code';
  if (r.post.currencyReason !== undefined) {
    const why = textProblem(r.post.currencyReason, REASON_MAX);
    if (why) return `post.currencyReason ${why}`; // A11
  }
  return null;
}
