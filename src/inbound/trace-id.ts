// R18: the trace of a reconciliation: the trace id in the traceparent its receipt kept (the ingress request's span).
import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { webhookReceipts } from '../db/schema/index.js';
import { traceIdOf } from '../tracing/context.js';

/** Null when tracing was off when the webhook came in. */
export async function reconciliationTraceId(db: Db, provider: string, providerEventId: string): Promise<string | null> {
  const [row] = await db
    .select({ traceparent: webhookReceipts.traceparent })
    .from(webhookReceipts)
    .where(and(eq(webhookReceipts.provider, provider), eq(webhookReceipts.providerEventId, providerEventId)));
  return traceIdOf(row?.traceparent);
}
