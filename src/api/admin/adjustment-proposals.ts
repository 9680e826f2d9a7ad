// A5 for L3: the adjustment waiting under dual control is approved by a second principal (then posted) or
// cancelled by anyone with the operator role (POST /ledger/adjustments answers 202 with it above the amount).
import { z } from '@hono/zod-openapi';
import type { AdjustmentProposalRow } from '../../ledger/adjustment-proposals.js';
import { approveAdjustment, cancelAdjustment, SelfApprovalError } from '../../ledger/adjustment-proposals.js';
import { AdjustmentRefusedError } from '../../ledger/adjustments.js';
import type { ApiDeps } from '../deps.js';
import { actorOf } from '../../audit/record.js';
import { ApiError } from '../errors.js';
import { refuseBootstrapMoney, refuseUnprovenApprover } from './operator.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { conflictResponse, errorResponses, json } from './outbound-schemas.js';

const iso = z.string().openapi({ format: 'date-time' });
export const adjustmentProposalSchema = z
  .object({
    id: z.string().openapi({ example: 'adp_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('ledger_adjustment_proposal'),
    provider: z.string(),
    payment_reference: z.string(),
    amount_minor: z.string(),
    currency: z.string(),
    operator: z.string(),
    reason: z.string(),
    reconciliation_id: z.string().nullable(),
    proposed_by_key: z.string(),
    proposed_at: iso,
    closed: z.enum(['approved', 'cancelled']).nullable(),
    closed_by: z.string().nullable(),
    closed_by_key: z.string().nullable(),
    closed_at: iso.nullable(),
    adjustment_id: z.string().nullable(),
  })
  .openapi('LedgerAdjustmentProposal', {
    description: 'A5: an adjustment above the dual-control amount, waiting for a second principal',
  });

export const adjustmentProposalJson = (p: AdjustmentProposalRow): z.infer<typeof adjustmentProposalSchema> => ({
  id: p.id,
  object: 'ledger_adjustment_proposal',
  provider: p.provider,
  payment_reference: p.paymentReference,
  amount_minor: p.amountMinor.toString(),
  currency: p.currency,
  operator: p.operator,
  reason: p.reason,
  reconciliation_id: p.reconciliationId,
  proposed_by_key: p.proposedByKey,
  proposed_at: p.proposedAt.toISOString(),
  closed: p.closed as 'approved' | 'cancelled' | null,
  closed_by: p.closedBy,
  closed_by_key: p.closedByKey,
  closed_at: p.closedAt?.toISOString() ?? null,
  adjustment_id: p.adjustmentId,
});

const idParam = z.object({
  id: z
    .string()
    .regex(/^adp_[0-9a-z]{26}$/, 'must be an adp_… id')
    .openapi({ param: { name: 'id', in: 'path' } }),
});

const route = (kind: 'approve' | 'cancel', ok: z.ZodType) =>
  adminRoute(
    { role: 'operator', merchant: false },
    {
      method: 'post',
      path: `/ledger/adjustments/proposals/{id}/${kind}`,
      tags: ['Ledger'],
      summary:
        kind === 'approve'
          ? 'Approve an adjustment waiting under dual control (A5): a principal other than the proposer; it is posted'
          : 'Cancel an adjustment waiting under dual control (A5): the proposer or another operator',
      request: { params: idParam },
      responses: {
        200: json(ok, kind === 'approve' ? 'Posted' : 'Cancelled'),
        ...(kind === 'approve'
          ? {
              202: json(
                adjustmentProposalSchema,
                'A27: the first of the two approvals a proposal by no person needs (an API key): recorded, not posted',
              ),
            }
          : {}),
        ...errorResponses,
        ...conflictResponse,
      },
    },
  );

/** Registered by registerLedger, which answers the proposal itself; `adjustmentJson` renders the posted adjustment. */
export function registerAdjustmentProposals(
  admin: AdminApp,
  deps: ApiDeps,
  adjustment: { schema: z.ZodType; json: (row: never) => unknown },
): void {
  const refused = (error: unknown): never => {
    if (error instanceof SelfApprovalError) throw new ApiError('forbidden', error.message);
    if (error instanceof AdjustmentRefusedError) throw new ApiError(error.code, error.message);
    throw error;
  };
  admin.openapi(route('approve', adjustment.schema), async (c) => {
    const principal = c.get('principal');
    refuseBootstrapMoney(principal); // A12
    refuseUnprovenApprover(deps.profile.idp, principal, (deps.now?.() ?? new Date()).getTime()); // A27
    const { id } = c.req.valid('param');
    const approved = await approveAdjustment(deps.db, id, {
      keyId: principal.keyId,
      name: principal.name,
      audit: actorOf(principal),
    }).catch(refused);
    if ('awaiting' in approved) return c.json(adjustmentProposalJson(approved.awaiting), 202);
    return c.json(adjustment.json(approved.adjustment as never) as never, 200);
  });
  admin.openapi(route('cancel', adjustmentProposalSchema), async (c) => {
    const principal = c.get('principal');
    const { id } = c.req.valid('param');
    const row = await cancelAdjustment(deps.db, id, { keyId: principal.keyId, name: principal.name }).catch(refused);
    return c.json(adjustmentProposalJson(row), 200);
  });
}
