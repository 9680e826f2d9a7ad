// R18: the trace of a delivery: the trace id in the traceparent its event kept (the dispatcher's consume of the
// Kafka message, in the trace of the payment that produced it).
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { events } from '../db/schema/index.js';
import { traceIdOf } from '../tracing/context.js';

/** Null when tracing was off when the event came in. */
export async function deliveryTraceId(db: Db, eventPublicId: string): Promise<string | null> {
  const [row] = await db.select({ traceparent: events.traceparent }).from(events).where(eq(events.eventPublicId, eventPublicId));
  return traceIdOf(row?.traceparent);
}
