// Admin routes for the ledger (L3, L6): an operator's audited adjustment against a payment, the adjustments
// of a payment, and the ledger check (`apipay ledger check`).
import { z } from '@hono/zod-openapi';
import { AdjustmentNeedsApprovalError, adjustmentsOf, AdjustmentRefusedError, postAdjustment, type AdjustmentRow } from '../../ledger/adjustments.js';
import { openAdjustmentProposals, proposeAdjustment } from '../../ledger/adjustment-proposals.js';
import { limitsOf } from '../../ledger/money-policy.js';
import { adjustmentProposalJson, adjustmentProposalSchema, registerAdjustmentProposals } from './adjustment-proposals.js';
import { checkLedger } from '../../ledger/check.js';
import { CURRENCY, OPERATOR_MAX, REASON_MAX, textProblem } from '../../shared/operator-input.js';
import { actorOf } from '../../audit/record.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { OPERATOR_FIELD_HELP, operatorOf, refuseBootstrapMoney } from './operator.js';
import { conflictResponse, errorResponses, json } from './outbound-schemas.js';

const tags = ['Ledger'];
const providerName = z.string().regex(/^[a-z0-9-]+$/, 'lowercase, digits and dashes');
const storable = (max: number) =>
  z.string().trim().superRefine((value, ctx) => {
    const problem = textProblem(value, max);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const adjustmentSchema = z
  .object({
    id: z.string().openapi({ example: 'adj_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('ledger_adjustment'),
    provider: z.string(),
    payment_reference: z.string(),
    amount_minor: z.string().openapi({ description: 'signed: > 0 adds to what is settled on the payment, < 0 gives back' }),
    currency: z.string(),
    operator: z.string(),
    reason: z.string(),
    reconciliation_id: z.string().nullable(),
    ledger_transaction_id: z.string(),
    created_at: z.string().openapi({ format: 'date-time' }),
    operator_key: z.string().nullable().openapi({ description: 'A5: the key that asked for it (null on older rows)' }),
    proposal_id: z.string().nullable().openapi({ description: 'A5: the dual-control proposal it was approved from' }),
    approved_by: z.string().nullable(),
    approved_by_key: z.string().nullable(),
    approved_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('LedgerAdjustment');

const adjustmentJson = (a: AdjustmentRow): z.infer<typeof adjustmentSchema> => ({
  id: a.id,
  object: 'ledger_adjustment',
  provider: a.provider,
  payment_reference: a.paymentReference,
  amount_minor: a.amountMinor.toString(),
  currency: a.currency,
  operator: a.operator,
  reason: a.reason,
  reconciliation_id: a.reconciliationId,
  ledger_transaction_id: a.ledgerTransactionId,
  created_at: a.createdAt.toISOString(),
  operator_key: a.operatorKey,
  proposal_id: a.proposalId,
  approved_by: a.approvedBy,
  approved_by_key: a.approvedByKey,
  approved_at: a.approvedAt?.toISOString() ?? null,
});

const createAdjustmentRoute = adminRoute({ role: 'operator', merchant: false }, {
  method: 'post',
  path: '/ledger/adjustments',
  tags,
  summary: "Post an operator's correcting transaction against a payment, with its audit row, in one transaction (L3)",
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .strictObject({
              provider: providerName,
              payment_reference: z.string().min(1).max(200).regex(/^[\w.:-]+$/, 'letters, digits, _ . : -'),
              amount_minor: z.string().regex(/^-?[1-9]\d{0,17}$/, 'must be non-zero signed minor units (at most 18 digits)'),
              currency: z.string().regex(CURRENCY, 'must be an ISO 4217 code'),
              operator: storable(OPERATOR_MAX).optional().openapi({ description: OPERATOR_FIELD_HELP }),
              reason: storable(REASON_MAX),
              reconciliation_id: z.string().max(300).optional(),
              idempotency_key: z.string().min(1).max(200).regex(/^[\w.:-]+$/, 'letters, digits, _ . : -').optional(),
              currency_reason: storable(REASON_MAX)
                .optional()
                .openapi({ description: "A11: why the adjustment is not in the payment's currency (required then; a second person always approves it)" }),
            })
            .openapi('LedgerAdjustmentRequest'),
        },
      },
    },
  },
  responses: {
    201: json(adjustmentSchema, 'Posted'),
    200: json(adjustmentSchema, 'Already posted with this idempotency key'),
    202: json(adjustmentProposalSchema, 'A5: above the dual-control amount: proposed, posted once a second principal approves'),
    ...errorResponses,
    ...conflictResponse,
  },
});

const listAdjustmentsRoute = adminRoute({ role: 'viewer', merchant: false }, {
  method: 'get',
  path: '/ledger/adjustments',
  tags,
  summary: 'The adjustments of one payment, oldest first',
  request: { query: z.strictObject({ provider: providerName, payment_reference: z.string().min(1).max(200) }) },
  responses: {
    200: json(z.object({ data: z.array(adjustmentSchema), proposals: z.array(adjustmentProposalSchema) }), 'Adjustments, and those waiting for approval (A5)'),
    ...errorResponses,
  },
});

const violationSchema = z.object({ kind: z.enum(['unbalanced', 'hash_mismatch', 'past_settled', 'posted_twice', 'export_mismatch']), message: z.string(), ids: z.array(z.string()) });
const datetime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });
const checkRoute = adminRoute({ role: 'viewer', merchant: false }, {
  method: 'get',
  path: '/ledger/check',
  tags,
  summary: 'L6: balanced transactions, payment accounts within what the provider settled, provider objects once, export = ledger',
  request: { query: z.strictObject({ provider: providerName.optional(), from: datetime.optional(), to: datetime.optional() }) },
  responses: {
    200: json(
      z.object({ ok: z.boolean(), violations: z.array(violationSchema), checked: z.object({ transactions: z.number(), payment_accounts: z.number(), resolutions: z.number() }) }).openapi('LedgerCheck'),
      'The check; ok is false when any violation was found',
    ),
    ...errorResponses,
  },
});

export function registerLedger(admin: AdminApp, deps: ApiDeps): void {
  const logger = deps.logger.child({ resource: 'ledger' });

  registerAdjustmentProposals(admin, deps, { schema: adjustmentSchema, json: adjustmentJson as (row: never) => unknown });

  admin.openapi(createAdjustmentRoute, async (c) => {
    const b = c.req.valid('json');
    const principal = c.get('principal');
    refuseBootstrapMoney(principal); // A12
    const input = {
      provider: b.provider,
      paymentReference: b.payment_reference,
      amountMinor: b.amount_minor,
      currency: b.currency,
      operator: operatorOf(principal, b.operator), // A2
      actor: actorOf(principal), // A3
      reason: b.reason,
      ...(b.reconciliation_id ? { reconciliationId: b.reconciliation_id } : {}),
      ...(b.idempotency_key ? { idempotencyKey: b.idempotency_key } : {}),
      ...(b.currency_reason ? { currencyReason: b.currency_reason } : {}),
    };
    const refused = (error: unknown): never => {
      if (error instanceof AdjustmentRefusedError) throw new ApiError(error.code, error.message);
      throw error;
    };
    // A11: the money policy decides, inside the posting's transaction, whether one person may post this alone.
    const policy = { limits: limitsOf(deps.profile.inbound), operatorKeys: [principal.keyId] }; // A12: the person's other keys are added by the policy
    const outcome = await postAdjustment(deps.db, input, { operatorKey: principal.keyId, policy }).catch((error) => {
      if (error instanceof AdjustmentNeedsApprovalError) return error;
      return refused(error);
    });
    if (outcome instanceof AdjustmentNeedsApprovalError) {
      // A5: nothing is posted until a second person approves (POST /ledger/adjustments/proposals/{id}/approve).
      const why = b.currency_reason ? `${input.reason.trim()} (in ${b.currency}: ${b.currency_reason.trim()})` : input.reason;
      const proposal = await proposeAdjustment(deps.db, { ...input, reason: why }, { keyId: principal.keyId, name: principal.name }).catch(refused);
      logger.info({ proposalId: proposal.id, keyId: principal.keyId, why: outcome.message }, 'ledger adjustment proposed (A5, A11)');
      return c.json(adjustmentProposalJson(proposal), 202);
    }
    const { adjustment, replayed } = outcome;
    if (!replayed) logger.info({ adjustmentId: adjustment.id, operator: adjustment.operator, ledgerTransactionId: adjustment.ledgerTransactionId }, 'ledger adjustment (L3)');
    return replayed ? c.json(adjustmentJson(adjustment), 200) : c.json(adjustmentJson(adjustment), 201);
  });

  admin.openapi(listAdjustmentsRoute, async (c) => {
    const q = c.req.valid('query');
    const [rows, proposals] = await Promise.all([adjustmentsOf(deps.db, q.provider, q.payment_reference), openAdjustmentProposals(deps.db, q.provider, q.payment_reference)]);
    return c.json({ data: rows.map(adjustmentJson), proposals: proposals.map(adjustmentProposalJson) }, 200);
  });

  admin.openapi(checkRoute, async (c) => {
    const q = c.req.valid('query');
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to) throw new ApiError('validation_failed', 'from: must not be after to');
    const result = await checkLedger(deps.db, { ...(q.provider ? { provider: q.provider } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}) });
    return c.json(result, 200);
  });
}
