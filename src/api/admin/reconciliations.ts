// Admin routes for reconciliations (I7, I11): list by state and provider, one with its transitions and
// resolution, and the operator resolution that runs the workflow's `resolve` update.
import { z } from '@hono/zod-openapi';
import {
  createReconciliationAdmin,
  ResolutionConflictError,
  type ReconciliationRow,
  type ResolutionRow,
  type TransitionRow,
} from '../../inbound/reconciliation-admin.js';
import { RECONCILIATION_STATES } from '../../inbound/state-machine.js';
import { RESOLUTION_DECISIONS, type OperatorResolution } from '../../shared/inbound.js';
import { AMOUNT_MINOR, CURRENCY, OPERATOR_MAX, REASON_MAX, textProblem } from '../../shared/operator-input.js';
import { bindReconciliationGauges } from '../../metrics/inbound-ledger.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './index.js';
import { conflictResponse, errorResponses } from './outbound-schemas.js';
import { decodeCursor, listEnvelope, page, paginationQuery } from './pagination.js';

const tags = ['Reconciliations'];
const json = <T extends z.ZodTypeAny>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const iso = z.string().openapi({ format: 'date-time' });
const minor = z.string().openapi({ description: 'amount in minor units (cents), as a decimal string', example: '1250' });

const stateSchema = z.enum(RECONCILIATION_STATES);

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
    provider_object_id: z.string().nullable().openapi({ description: 'L1: the refund, dispute or reversal id the event carried', example: 're_3Q2w3E' }),
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

const transitionSchema = z
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
    post_basis: z.enum(['provider', 'webhook', 'explicit']).nullable().openapi({ description: 'L2: what applied was told to post' }),
    posted_amount_minor: minor.nullable().openapi({ description: 'L2: the amount applied stood for (posted now, or already in the ledger)' }),
    posted_currency: z.string().nullable(),
    ledger_transaction_id: z.string().nullable().openapi({ description: 'L4: the transaction this resolution posted, or null' }),
    resolved_at: iso,
  })
  .openapi('OperatorResolution');

const detailSchema = reconciliationSchema
  .extend({ transitions: z.array(transitionSchema), resolution: resolutionSchema.nullable() })
  .openapi('ReconciliationDetail');

export function reconciliationJson(row: ReconciliationRow): z.infer<typeof reconciliationSchema> {
  return {
    id: row.id,
    object: 'reconciliation',
    provider: row.provider,
    provider_event_id: row.providerEventId,
    event_type: row.eventType,
    payment_reference: row.paymentReference,
    amount_minor: row.amountMinor.toString(),
    currency: row.currency,
    effective_at: row.effectiveAt.toISOString(),
    state: row.state as z.infer<typeof stateSchema>,
    reason: row.reason,
    provider_amount_minor: row.providerAmountMinor?.toString() ?? null,
    provider_currency: row.providerCurrency,
    ledger_transaction_id: row.ledgerTransactionId,
    provider_object_id: row.providerObjectId,
    discrepancy: row.discrepancy ?? null,
    acknowledged_at: row.acknowledgedAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const transitionJson = (t: TransitionRow) => ({
  from_state: t.fromState as z.infer<typeof stateSchema>,
  to_state: t.toState as z.infer<typeof stateSchema>,
  actor: t.actor,
  reason: t.reason,
  at: t.at.toISOString(),
});

export const resolutionJson = (r: ResolutionRow): z.infer<typeof resolutionSchema> => ({
  id: r.id,
  decision: r.decision as OperatorResolution['decision'],
  operator: r.operator,
  reason: r.reason,
  previous_state: r.previousState,
  amount_minor: r.amountMinor.toString(),
  currency: r.currency,
  provider_amount_minor: r.providerAmountMinor?.toString() ?? null,
  provider_currency: r.providerCurrency,
  post_basis: r.postBasis as 'provider' | 'webhook' | 'explicit' | null,
  posted_amount_minor: r.postedAmountMinor?.toString() ?? null,
  posted_currency: r.postedCurrency,
  ledger_transaction_id: r.ledgerTransactionId,
  resolved_at: r.resolvedAt.toISOString(),
});

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
    }),
  ])
  .openapi({ description: "L2: what applied posts: the provider's amount and currency (default), the webhook's, or this amount" });

export const resolutionRequestSchema = z
  .strictObject({
    decision: z.enum(RESOLUTION_DECISIONS).openapi({ description: 'acknowledged: applied without posting (the ledger is already right, L3)' }),
    operator: operatorText(OPERATOR_MAX),
    reason: operatorText(REASON_MAX),
    post: postSchema.optional(),
  })
  .refine((b) => b.post === undefined || b.decision === 'applied', { path: ['post'], message: 'is only for an applied decision' })
  .openapi('ResolutionRequest');

/** The API's snake_case body as the workflow's OperatorResolution. */
export function toOperatorResolution(body: z.infer<typeof resolutionRequestSchema>): OperatorResolution {
  const { post, ...rest } = body;
  if (post === undefined) return rest;
  return { ...rest, post: typeof post === 'string' ? post : { amountMinor: post.amount_minor, currency: post.currency } };
}

const idParam = z.object({
  id: z
    .string()
    // A9: the provider event id is any printable ASCII up to 200 characters (src/providers/payload.ts), so is this.
    .regex(/^reconcile:[a-z0-9-]+:[\x21-\x7e]{1,200}$/, 'must be a reconcile:<provider>:<event id> id')
    .openapi({ param: { name: 'id', in: 'path' }, example: 'reconcile:sandbox-stripe:evt_1Q2w3E' }),
});

const listRoute = adminRoute({ role: 'viewer', merchant: false }, {
  method: 'get',
  path: '/reconciliations',
  tags,
  summary: 'List reconciliations by state and provider, ordered by id, with cursor pagination',
  request: { query: z.object({ state: stateSchema.optional(), provider: z.string().regex(/^[a-z0-9-]+$/).optional(), ...paginationQuery }) },
  responses: { 200: json(listEnvelope(reconciliationSchema), 'A page of reconciliations'), ...errorResponses },
});

const getRoute = adminRoute({ role: 'viewer', merchant: false }, {
  method: 'get',
  path: '/reconciliations/{id}',
  tags,
  summary: 'One reconciliation with its transitions and its operator resolution',
  request: { params: idParam },
  responses: { 200: json(detailSchema, 'The reconciliation'), ...errorResponses },
});

const resolveRoute = adminRoute({ role: 'operator', merchant: false }, {
  method: 'post',
  path: '/reconciliations/{id}/resolution',
  tags,
  summary:
    'Resolve a reconciliation in manual_review: applied (ledger posting), acknowledged or rejected; ledger, audit row and state in one transaction (I11, R2, L2)',
  request: { params: idParam, body: { required: true, content: { 'application/json': { schema: resolutionRequestSchema } } } },
  responses: {
    200: json(detailSchema, 'Resolved'),
    202: json(detailSchema, 'Accepted, not finished within the request timeout: the current state; GET it again'),
    ...errorResponses,
    ...conflictResponse,
  },
});

export function registerReconciliations(admin: AdminApp, deps: ApiDeps): void {
  const service = createReconciliationAdmin({ db: deps.db, temporal: deps.temporal, answerWithinMs: deps.profile.inbound.resolution_request_timeout });
  // I13: the API's /metrics shows queue depth and manual review too (read from PostgreSQL at scrape time).
  bindReconciliationGauges(deps.db);
  const logger = deps.logger.child({ resource: 'reconciliation' });
  const detail = (found: NonNullable<Awaited<ReturnType<typeof service.get>>>) => ({
    ...reconciliationJson(found.reconciliation),
    transitions: found.transitions.map(transitionJson),
    resolution: found.resolution ? resolutionJson(found.resolution) : null,
  });

  admin.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const rows = await service.list({
      limit: q.limit,
      ...(q.state ? { state: q.state } : {}),
      ...(q.provider ? { provider: q.provider } : {}),
      ...(q.cursor !== undefined ? { afterId: decodeCursor(q.cursor)! } : {}),
    });
    const result = page(rows, q.limit, (r) => r.id);
    return c.json({ ...result, data: result.data.map(reconciliationJson) }, 200);
  });

  admin.openapi(getRoute, async (c) => {
    const { id } = c.req.valid('param');
    const found = await service.get(id);
    if (!found) throw new ApiError('not_found', `reconciliation ${id} does not exist`);
    return c.json(detail(found), 200);
  });

  admin.openapi(resolveRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const found = await service.resolve(id, toOperatorResolution(body)).catch((error) => {
      if (error instanceof ResolutionConflictError) throw new ApiError('conflict', error.message);
      throw error;
    });
    if (!found) throw new ApiError('not_found', `reconciliation ${id} does not exist`);
    logger.info({ reconciliationId: id, decision: body.decision, operator: body.operator, pending: found.pending }, 'operator resolution (I11)');
    return found.pending ? c.json(detail(found), 202) : c.json(detail(found), 200);
  });
}
