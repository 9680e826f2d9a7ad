// Finance exports (I11, L2, L4): operator resolutions in a time range as CSV, with the webhook's, the provider's
// and the posted amounts each in its own currency and exponent, and the ledger columns of the transaction that
// resolution posted (signed) — so the file sums to the ledger; and every ledger entry of a period.
import { z } from '@hono/zod-openapi';
import { csvLine, currencyExponent, minorToDecimal } from '../../inbound/csv.js';
import { ledgerLines, resolutionLines } from '../../ledger/exports.js';
import type { ApiDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { adminRoute } from './access.js';
import type { AdminApp } from './app.js';
import { errorResponses } from './outbound-schemas.js';
import { isoDateTime } from './datetime.js';

/** Minor units, the currency's exponent and the decimal, or three empty fields. */
const money = (amount: string | null, currency: string | null) =>
  amount === null || currency === null ? [null, null, null] : [amount, currencyExponent(currency), minorToDecimal(amount, currency)];

export const RESOLUTION_CSV_COLUMNS = [
  'resolution_id', 'resolved_at', 'reconciliation_id', 'provider', 'provider_event_id', 'event_type', 'payment_reference',
  'decision', 'operator', 'reason', 'previous_state',
  'currency', 'amount_minor', 'exponent', 'amount',
  'provider_currency', 'provider_amount_minor', 'provider_exponent', 'provider_amount',
  'post_basis', 'posted_currency', 'posted_amount_minor', 'posted_exponent', 'posted_amount',
  'ledger_transaction_id', 'ledger_currency', 'ledger_amount_minor', 'ledger_exponent', 'ledger_amount',
  // A4/A5: the principal's key (or temporal:<identity>), the way in, and the dual-control approval.
  'operator_key', 'via', 'proposed_at', 'approved_by', 'approved_by_key', 'approved_at',
] as const;
const LEDGER_COLUMNS = [
  'transaction_id', 'posted_at', 'effective_at', 'kind', 'idempotency_key', 'provider', 'payment_reference', 'actor',
  'reconciliation_id', 'audit_id', 'account', 'currency', 'amount_minor', 'exponent', 'amount',
] as const;
const textColumns = (columns: readonly string[], names: string[]) => new Set(names.map((n) => columns.indexOf(n)));
const RESOLUTION_TEXT = textColumns(RESOLUTION_CSV_COLUMNS, ['provider_event_id', 'event_type', 'payment_reference', 'operator', 'reason', 'operator_key', 'approved_by', 'approved_by_key']);
const LEDGER_TEXT = textColumns(LEDGER_COLUMNS, ['idempotency_key', 'kind', 'payment_reference', 'actor', 'reconciliation_id', 'account']);

const datetime = isoDateTime();
const periodQuery = z.strictObject({
  from: datetime.optional().openapi({ description: 'inclusive; default: the beginning' }),
  to: datetime.optional().openapi({ description: 'exclusive; default: now' }),
  provider: z.string().regex(/^[a-z0-9-]+$/).optional(),
});
const csvResponse = { 200: { content: { 'text/csv': { schema: z.string() } }, description: 'RFC 4180 CSV with a header line' }, ...errorResponses };

const resolutionsRoute = adminRoute({ role: 'admin', merchant: false }, {
  method: 'get',
  path: '/exports/operator-resolutions.csv',
  tags: ['Exports'],
  summary: 'Operator resolutions resolved in [from, to) as CSV (I11, L4): ledger_* is the transaction the resolution posted, signed',
  request: { query: periodQuery },
  responses: csvResponse,
});
const ledgerRoute = adminRoute({ role: 'admin', merchant: false }, {
  method: 'get',
  path: '/exports/ledger.csv',
  tags: ['Exports'],
  summary: 'Every ledger entry of the transactions posted in [from, to) as CSV, one line per entry (L4)',
  request: { query: periodQuery },
  responses: csvResponse,
});

export function periodOf(q: z.infer<typeof periodQuery>, now: Date) {
  const from = new Date(q.from ?? 0);
  const to = q.to ? new Date(q.to) : now;
  if (from > to) throw new ApiError('validation_failed', 'from: must not be after to');
  return { from, to, ...(q.provider ? { provider: q.provider } : {}) };
}
const csv = (name: string, body: string) => ({
  body,
  headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${name}"` },
});

export function registerExports(admin: AdminApp, deps: ApiDeps): void {
  const now = () => deps.now?.() ?? new Date();
  admin.openapi(resolutionsRoute, async (c) => {
    const lines = await resolutionLines(deps.db, periodOf(c.req.valid('query'), now()));
    let body = csvLine([...RESOLUTION_CSV_COLUMNS]);
    for (const l of lines) {
      body += csvLine(
        [
          l.resolution_id, l.resolved_at.toISOString(), l.reconciliation_id, l.provider, l.provider_event_id, l.event_type, l.payment_reference,
          l.decision, l.operator, l.reason, l.previous_state,
          l.currency, ...money(l.amount_minor, l.currency),
          l.provider_currency, ...money(l.provider_amount_minor, l.provider_currency),
          l.post_basis, l.posted_currency, ...money(l.posted_amount_minor, l.posted_currency),
          l.ledger_transaction_id, l.ledger_currency, ...money(l.ledger_amount_minor, l.ledger_currency),
          l.operator_key, l.via, l.proposed_at && new Date(l.proposed_at).toISOString(), l.approved_by, l.approved_by_key,
          l.approved_at && new Date(l.approved_at).toISOString(),
        ],
        RESOLUTION_TEXT,
      );
    }
    const out = csv('operator-resolutions.csv', body);
    return c.body(out.body, 200, out.headers) as never;
  });

  admin.openapi(ledgerRoute, async (c) => {
    const lines = await ledgerLines(deps.db, periodOf(c.req.valid('query'), now()));
    let body = csvLine([...LEDGER_COLUMNS]);
    for (const l of lines) {
      body += csvLine(
        [
          l.transaction_id, l.posted_at.toISOString(), l.effective_at.toISOString(), l.kind, l.idempotency_key, l.provider, l.payment_reference,
          l.actor, l.reconciliation_id, l.audit_id, l.account, l.currency, ...money(l.amount_minor, l.currency),
        ],
        LEDGER_TEXT,
      );
    }
    const out = csv('ledger.csv', body);
    return c.body(out.body, 200, out.headers) as never;
  });
}
