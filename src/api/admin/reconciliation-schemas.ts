// The OpenAPI schemas of the reconciliation admin routes (src/api/admin/reconciliations.ts): a reconciliation, its
// transitions and operator resolution (I7, I11, L1, L2, L4, L5), and the resolution request (R2, L2, L3).
import { z } from '@hono/zod-openapi';
import { RECONCILIATION_STATES } from '../../inbound/state-machine.js';
import { RESOLUTION_DECISIONS } from '../../shared/inbound.js';
import { AMOUNT_MINOR, CURRENCY, OPERATOR_MAX, REASON_MAX, textProblem } from '../../shared/operator-input.js';

const iso = z.string().openapi({ format: 'date-time' });
const minor = z.string().openapi({ description: 'amount in minor units (cents), as a decimal string', example: '1250' });

export const stateSchema = z.enum(RECONCILIATION_STATES);

export const reconciliationSchema = z
  .object({
    id: z.string().openapi({ example: 'reconcile:sandbox-stripe:evt_1Q2w3E' }),
    object: z.literal('reconciliation'),
    provider: z.string(),
    provider_event_id: z.string(),
    event_type: z.string(),
    payment_reference: z.string(),
    amount_minor: minor,
    currency: z.string(),
    effective_at: iso,
    state: stateSchema,
    reason: z.string().nullable(),
    provider_amount_minor: minor.nullable(),
    provider_currency: z.string().nullable(),
    ledger_transaction_id: z.string().nullable(),
    provider_object_id: z
      .string()
      .nullable()
      .openapi({ description: 'L1: the refund, dispute or reversal id the event carried', example: 're_3Q2w3E' }),
    discrepancy: z
      .object({
        posted: z.object({ transactionId: z.string(), capturedMinor: minor, settledMinor: minor, currency: z.string() }),
        reported: z.object({ status: z.string(), amountMinor: minor, currency: z.string(), settledMinor: minor }),
      })
      .nullable()
      .openapi({ description: 'L5: what the ledger posted and what the provider reports, for a discrepancy after settlement' }),
    acknowledged_at: iso,
    created_at: iso,
    updated_at: iso,
  })
  .openapi('Reconciliation');

export const transitionSchema = z
  .object({ from_state: stateSchema, to_state: stateSchema, actor: z.string(), reason: z.string().nullable(), at: iso })
  .openapi('ReconciliationTransition');

export const resolutionSchema = z
  .object({
    id: z.string().openapi({ example: 'opr_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    decision: z.enum(RESOLUTION_DECISIONS),
    operator: z.string(),
    reason: z.string(),
    previous_state: z.string(),
    amount_minor: minor.openapi({ description: "the webhook's amount" }),
    currency: z.string(),
    provider_amount_minor: minor.nullable(),
    provider_currency: z.string().nullable(),
    post_basis: z
      .enum(['provider', 'webhook', 'explicit'])
      .nullable()
      .openapi({ description: 'L2: what applied was told to post' }),
    posted_amount_minor: minor
      .nullable()
      .openapi({ description: 'L2: the amount applied stood for (posted now, or already in the ledger)' }),
    posted_currency: z.string().nullable(),
    ledger_transaction_id: z.string().nullable().openapi({ description: 'L4: the transaction this resolution posted, or null' }),
    resolved_at: iso,
    operator_key: z
      .string()
      .nullable()
      .openapi({ description: 'A4: the API key id (or bootstrap), or temporal:<identity>; null on older rows' }),
    via: z
      .enum(['api', 'temporal'])
      .nullable()
      .openapi({ description: 'A4: the admin API, or an update/signal sent to Temporal directly' }),
    proposal_id: z.string().nullable().openapi({ description: 'A5: the proposal approved under dual control' }),
    proposed_at: iso.nullable(),
    approved_by: z.string().nullable().openapi({ description: 'A5: the second principal who approved it' }),
    approved_by_key: z.string().nullable(),
    approved_at: iso.nullable(),
  })
  .openapi('OperatorResolution');

export const proposalSchema = z
  .object({
    id: z.string().openapi({ example: 'rpr_7d0c2b8e-…' }),
    decision: z.enum(RESOLUTION_DECISIONS),
    reason: z.string(),
    post: z.unknown().nullable(),
    proposed_by: z.string(),
    proposed_by_key: z.string(),
    proposed_via: z.enum(['api', 'temporal']),
    proposed_at: iso,
  })
  .openapi('ResolutionProposal', {
    description: 'A5: a resolution above the dual-control amount, waiting for a second principal',
  });

export const detailSchema = reconciliationSchema
  .extend({
    transitions: z.array(transitionSchema),
    resolution: resolutionSchema.nullable(),
    proposal: proposalSchema.nullable(),
  })
  .openapi('ReconciliationDetail');

/** R2: text PostgreSQL can store (no U+0000, no lone surrogate), bounded, trimmed. */
const operatorText = (max: number) =>
  z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      const problem = textProblem(value, max);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

const postSchema = z
  .union([
    z.enum(['provider', 'webhook']),
    z.strictObject({
      amount_minor: z.string().regex(AMOUNT_MINOR, 'must be positive minor units (at most 18 digits)'),
      currency: z.string().regex(CURRENCY, 'must be an ISO 4217 code'),
      currency_reason: operatorText(REASON_MAX).optional().openapi({
        description: "A11: why the amount is not in the payment's currency (required then; a second person approves it)",
      }),
    }),
  ])
  .openapi({
    description: "L2: what applied posts: the provider's amount and currency (default), the webhook's, or this amount",
  });

export const resolutionRequestSchema = z
  .strictObject({
    decision: z
      .enum(RESOLUTION_DECISIONS)
      .openapi({ description: 'acknowledged: applied without posting (the ledger is already right, L3)' }),
    operator: operatorText(OPERATOR_MAX)
      .optional()
      .openapi({ description: "A2: taken from the API key; if given it must be the key's own name or id (else 403)" }),
    reason: operatorText(REASON_MAX),
    post: postSchema.optional(),
  })
  .refine((b) => b.post === undefined || b.decision === 'applied', { path: ['post'], message: 'is only for an applied decision' })
  .openapi('ResolutionRequest');

export const idParam = z.object({
  id: z
    .string()
    // A9: the provider event id is any printable ASCII up to 200 characters (src/providers/payload.ts), so is this.
    .regex(/^reconcile:[a-z0-9-]+:[\x21-\x7e]{1,200}$/, 'must be a reconcile:<provider>:<event id> id')
    .openapi({ param: { name: 'id', in: 'path' }, example: 'reconcile:sandbox-stripe:evt_1Q2w3E' }),
});
