// Admin routes for reconciliations (I7, I11): list by state and provider, one with its transitions and
// resolution, and the operator resolution that runs the workflow's `resolve` update.
import { z } from '@hono/zod-openapi';
import { keyringFromEnv } from '../../shared/keyring.js';
import type { ProposalRow } from '../../inbound/dual-control.js';
import {
  createReconciliationAdmin,
  ResolutionConflictError,
  SelfApprovalError,
  type ReconciliationRow,
  type ResolutionRow,
  type TransitionRow,
} from '../../inbound/reconciliation-admin.js';
import { type OperatorResolution } from '../../shared/inbound.js';
import { bindReconciliationGauges } from '../../metrics/inbound-ledger.js';
import { actorOf } from '../../audit/record.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { operatorOf, refuseBootstrapMoney, refuseUnprovenApprover } from './operator.js';
import { conflictResponse, errorResponses, json } from './outbound-schemas.js';
import { reconciliationSearch, reconciliationSearchQuery } from './search-query.js';
import { afterTimeOf, listEnvelope, listWindow, page, paginationQuery, windowQuery } from './pagination.js';
import { timeCursor } from '../../db/list-window.js';
import {
  detailSchema,
  idParam,
  reconciliationSchema,
  resolutionRequestSchema,
  resolutionSchema,
  stateSchema,
} from './reconciliation-schemas.js';

const tags = ['Reconciliations'];

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
  operator_key: r.operatorKey,
  via: r.via as 'api' | 'temporal' | null,
  proposal_id: r.proposalId,
  proposed_at: r.proposedAt?.toISOString() ?? null,
  approved_by: r.approvedBy,
  approved_by_key: r.approvedByKey,
  approved_at: r.approvedAt?.toISOString() ?? null,
});

const proposalJson = (p: ProposalRow) => ({
  id: p.id,
  decision: p.decision as OperatorResolution['decision'],
  reason: p.reason,
  post: p.post ?? null,
  proposed_by: p.proposedBy,
  proposed_by_key: p.proposedByKey,
  proposed_via: p.proposedVia as 'api' | 'temporal',
  proposed_at: p.proposedAt.toISOString(),
});

/** The API's snake_case body as the workflow's OperatorResolution, by `operator` (A2: the principal's name). */
export function toOperatorResolution(body: z.infer<typeof resolutionRequestSchema>, operator: string): OperatorResolution {
  const { post, ...rest } = body;
  if (post === undefined) return { ...rest, operator };
  return { ...rest, operator, post:
      typeof post === 'string'
        ? post
        : { amountMinor: post.amount_minor, currency: post.currency, ...(post.currency_reason ? { currencyReason: post.currency_reason } : {}) },
  };
}

const listRoute = adminRoute({ role: 'viewer', merchant: false }, {
  method: 'get',
  path: '/reconciliations',
  tags,
  summary: 'List reconciliations by state, provider, payment reference, provider event id and creation time, oldest first (or desc), with cursor pagination (C4, C9)',
  request: {
    query: z.strictObject({ state: stateSchema.optional(), provider: z.string().regex(/^[a-z0-9-]+$/).optional(), ...reconciliationSearchQuery, ...paginationQuery, ...windowQuery }),
  },
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

/** A5: approve (a second principal) or cancel (the proposer or anyone else) the resolution waiting for approval. */
const decisionRoute = (kind: 'approve' | 'cancel') =>
  adminRoute({ role: 'operator', merchant: false }, {
    method: 'post',
    path: `/reconciliations/{id}/resolution/${kind}`,
    tags,
    summary:
      kind === 'approve'
        ? 'Approve the resolution waiting under dual control (A5): a principal other than the proposer; then it is posted'
        : 'Cancel the resolution waiting under dual control (A5): the proposer or another operator; back to manual_review',
    request: { params: idParam },
    responses: {
      200: json(detailSchema, kind === 'approve' ? 'Approved and resolved' : 'Cancelled'),
      202: json(detailSchema, 'Accepted, not finished within the request timeout (GET it again); A27: or the first of the two IdP approvals a proposal by no person needs'),
      ...errorResponses,
      ...conflictResponse,
    },
  });

export function registerReconciliations(admin: AdminApp, deps: ApiDeps): void {
  const service = createReconciliationAdmin({
    db: deps.db,
    temporal: deps.temporal,
    keys: keyringFromEnv(deps.env),
    answerWithinMs: deps.profile.inbound.resolution_request_timeout,
  });
  // I13: the API's /metrics shows queue depth and manual review too (read from PostgreSQL at scrape time).
  bindReconciliationGauges(deps.db);
  const logger = deps.logger.child({ resource: 'reconciliation' });
  const detail = (found: NonNullable<Awaited<ReturnType<typeof service.get>>>) => ({
    ...reconciliationJson(found.reconciliation),
    transitions: found.transitions.map(transitionJson),
    resolution: found.resolution ? resolutionJson(found.resolution) : null,
    proposal: found.proposal ? proposalJson(found.proposal) : null,
  });
  const conflicts = (error: unknown): never => {
    if (error instanceof ResolutionConflictError) throw new ApiError('conflict', error.message);
    if (error instanceof SelfApprovalError) throw new ApiError('forbidden', error.message);
    throw error;
  };

  admin.openapi(listRoute, async (c) => {
    const q = c.req.valid('query');
    const rows = await service.list({
      limit: q.limit,
      ...listWindow(q),
      ...(q.state ? { state: q.state } : {}),
      ...(q.provider ? { provider: q.provider } : {}),
      ...reconciliationSearch(q),
      ...afterTimeOf(q.cursor),
    });
    const result = page(rows, q.limit, (r) => timeCursor(r.createdAt, r.id));
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
    const principal = c.get('principal');
    refuseBootstrapMoney(principal); // A12
    const resolution = { ...toOperatorResolution(body, operatorOf(principal, body.operator)), actor: actorOf(principal) }; // A2, A3
    const who = { principal, requestId: principal.requestId ?? c.get('requestId') };
    const found = await service.resolve(id, resolution, who).catch(conflicts);
    if (!found) throw new ApiError('not_found', `reconciliation ${id} does not exist`);
    logger.info({ reconciliationId: id, decision: body.decision, operator: principal.keyId, pending: found.pending }, 'operator resolution (I11)');
    // A5: a proposal waiting for a second principal is accepted, not done: 202 with the proposal.
    return found.pending || found.proposal ? c.json(detail(found), 202) : c.json(detail(found), 200);
  });

  for (const kind of ['approve', 'cancel'] as const) {
    admin.openapi(decisionRoute(kind), async (c) => {
      const { id } = c.req.valid('param');
      const principal = c.get('principal');
      if (kind === 'approve') refuseBootstrapMoney(principal); // A12
      if (kind === 'approve') refuseUnprovenApprover(deps.profile.idp, principal, (deps.now?.() ?? new Date()).getTime()); // A27
      const found = await service[kind](id, { principal, requestId: c.get('requestId') }).catch(conflicts);
      if (!found) throw new ApiError('not_found', `reconciliation ${id} does not exist`);
      logger.info({ reconciliationId: id, keyId: principal.keyId, pending: found.pending }, `resolution ${kind} (A5)`);
      // A27: the first of two IdP approvals is accepted, not done: 202, the proposal still waiting.
      return c.json(detail(found), found.pending || ('awaitingSecondApproval' in found && found.awaitingSecondApproval) ? 202 : 200);
    });
  }
}
