// Finance exports (I11): every operator resolution in a time range as CSV, with amounts in minor units and as
// decimals, and the amount the ledger actually posted for it, so the file reconciles against the ledger.
import { createRoute, z } from '@hono/zod-openapi';
import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import { ledgerEntries, operatorResolutions, reconciliations } from '../../db/schema/index.js';
import { csvLine, minorToDecimal } from '../../inbound/csv.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { AdminApp } from './app.js';
import { errorResponses } from './outbound-schemas.js';

export const RESOLUTION_CSV_COLUMNS = [
  'resolution_id',
  'resolved_at',
  'reconciliation_id',
  'provider',
  'provider_event_id',
  'event_type',
  'payment_reference',
  'decision',
  'operator',
  'reason',
  'previous_state',
  'currency',
  'amount_minor',
  'amount',
  'provider_amount_minor',
  'provider_amount',
  'ledger_transaction_id',
  'ledger_amount_minor',
  'ledger_amount',
] as const;
const TEXT_COLUMNS = new Set(['provider_event_id', 'event_type', 'payment_reference', 'operator', 'reason'].map((c) => RESOLUTION_CSV_COLUMNS.indexOf(c as never)));

const datetime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });

const exportRoute = createRoute({
  method: 'get',
  path: '/exports/operator-resolutions.csv',
  tags: ['Exports'],
  summary: 'Operator resolutions resolved in [from, to) as CSV for finance (I11); ledger_amount_minor is what the ledger posted',
  request: {
    query: z.object({
      from: datetime.optional().openapi({ description: 'inclusive; default: the beginning' }),
      to: datetime.optional().openapi({ description: 'exclusive; default: now' }),
    }),
  },
  responses: { 200: { content: { 'text/csv': { schema: z.string() } }, description: 'RFC 4180 CSV with a header line' }, ...errorResponses },
});

export function registerExports(admin: AdminApp, deps: ApiDeps): void {
  admin.openapi(exportRoute, async (c) => {
    const q = c.req.valid('query');
    const from = new Date(q.from ?? 0);
    const to = q.to ? new Date(q.to) : (deps.now?.() ?? new Date());
    if (from > to) throw new ApiError('validation_failed', 'from: must not be after to');
    // What the ledger posted for the resolution: the debit side of its transaction.
    const posted = deps.db
      .select({ transactionId: ledgerEntries.transactionId, amount: sql<string>`sum(${ledgerEntries.amountMinor}) filter (where ${ledgerEntries.amountMinor} > 0)`.as('amount') })
      .from(ledgerEntries)
      .groupBy(ledgerEntries.transactionId)
      .as('posted');
    const rows = await deps.db
      .select({ r: operatorResolutions, c: reconciliations, ledgerAmount: posted.amount })
      .from(operatorResolutions)
      .innerJoin(reconciliations, eq(reconciliations.id, operatorResolutions.reconciliationId))
      .leftJoin(posted, eq(posted.transactionId, operatorResolutions.ledgerTransactionId))
      .where(and(gte(operatorResolutions.resolvedAt, from), lt(operatorResolutions.resolvedAt, to)))
      .orderBy(asc(operatorResolutions.resolvedAt), asc(operatorResolutions.id));
    let body = csvLine([...RESOLUTION_CSV_COLUMNS]);
    for (const { r, c: rec, ledgerAmount } of rows) {
      body += csvLine(
        [
          r.id,
          r.resolvedAt.toISOString(),
          r.reconciliationId,
          rec.provider,
          rec.providerEventId,
          rec.eventType,
          rec.paymentReference,
          r.decision,
          r.operator,
          r.reason,
          r.previousState,
          r.currency,
          r.amountMinor,
          minorToDecimal(r.amountMinor, r.currency),
          r.providerAmountMinor,
          r.providerAmountMinor === null ? null : minorToDecimal(r.providerAmountMinor, r.currency),
          r.ledgerTransactionId,
          ledgerAmount,
          ledgerAmount === null ? null : minorToDecimal(ledgerAmount, r.currency),
        ],
        TEXT_COLUMNS,
      );
    }
    return c.body(body, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="operator-resolutions.csv"`,
    }) as never;
  });
}
