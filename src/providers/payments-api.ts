// I8: the ApiPay-shaped payments API the sandbox schemes (`stripe`, `hmac`) query: GET {api_base_url}/payments/{ref}.
// Injectable fetch, a timeout, and typed errors carrying the status so the workflow can tell "unknown" (404) from
// "provider error" (5xx, network). A provider with its own API (stripe-api.ts) brings its own query instead.
import { z } from 'zod';
import type { ProviderPayment } from '../shared/inbound.js';
import { ProviderApiError, type PaymentQueryOptions } from './types.js';

export { ProviderApiError } from './types.js';

const items = z.array(z.object({ id: z.string().min(1), amountMinor: z.string().regex(/^\d+$/) })).optional();

const paymentSchema = z.object({
  reference: z.string(),
  status: z.enum(['succeeded', 'failed', 'pending', 'refunded', 'disputed']),
  amountMinor: z.string().regex(/^\d+$/),
  currency: z.string().regex(/^[A-Z]{3}$/),
  refunds: items,
  disputes: items,
  reversals: items,
});

export interface ProviderQuery extends PaymentQueryOptions {
  baseUrl: string;
  paymentReference: string;
}

/** The provider's payment, or null when it answers 404 (it does not know the payment, yet). */
export async function fetchProviderPayment(query: ProviderQuery): Promise<ProviderPayment | null> {
  const url = `${query.baseUrl.replace(/\/$/, '')}/payments/${encodeURIComponent(query.paymentReference)}`;
  let response: Response;
  try {
    response = await (query.fetch ?? fetch)(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(query.timeoutMs ?? 10_000),
    });
  } catch (error) {
    throw new ProviderApiError(`provider unreachable: ${(error as Error).message}`, null);
  }
  const text = await response.text();
  if (response.status === 404) return null;
  if (!response.ok) throw new ProviderApiError(`provider answered ${response.status}`, response.status, text.slice(0, 200));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProviderApiError('provider answered with invalid JSON', response.status, text.slice(0, 200));
  }
  const result = paymentSchema.safeParse(parsed);
  if (!result.success) {
    throw new ProviderApiError(
      `provider payment has an unexpected shape: ${result.error.issues.map((i) => i.path.join('.')).join(', ')}`,
      response.status,
    );
  }
  return result.data;
}
