// M1: writing an outbox row inside the caller's transaction, and the relay's claim → publish → mark cycle. A row is
// claimed with FOR UPDATE SKIP LOCKED, so N relays share the table without publishing one row at the same time; the
// lock is held until the row is marked, and a relay that dies before the mark releases it for the next claim. R18: a
// row keeps its writer's traceparent.
import { and, asc, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { outboxEvents } from '../db/schema/index.js';
import { currentTraceparent } from '../tracing/context.js';

/** A drizzle database or transaction. */
export type Executor = Db | Parameters<Parameters<Db['transaction']>[0]>[0];
export type OutboxRow = typeof outboxEvents.$inferSelect;

export interface OutboxEntry {
  /** evt_…: fixed here, so every publish of this row carries the same id and the dispatcher dedupes repeats (O3). */
  eventPublicId: string;
  type: string;
  data: Record<string, unknown>;
  /** Known for endpoint events; for ledger events the relay maps `provider` to the account (profile). */
  merchantAccount?: string;
  provider?: string;
  livemode?: boolean;
}

export async function writeOutbox(tx: Executor, entry: OutboxEntry): Promise<void> {
  await tx
    .insert(outboxEvents)
    .values({
      eventPublicId: entry.eventPublicId,
      type: entry.type,
      data: entry.data,
      merchantAccount: entry.merchantAccount ?? null,
      provider: entry.provider ?? null,
      livemode: entry.livemode ?? null,
      traceparent: currentTraceparent(), // R18: the relay's Kafka message continues the writer's trace
    })
    .onConflictDoNothing({ target: outboxEvents.eventPublicId });
}

/**
 * One relay cycle in one transaction: claims up to `limit` unpublished rows (oldest first, skipping rows another
 * relay holds), hands them to `publish` (which resolves only once Kafka acknowledged them), then marks them
 * published. Returns how many were published. A failure of `publish` rolls back: nothing is marked.
 */
/** Restricts a relay to some rows (tests that share one database each run their own relay); absent: all rows. */
export interface RelayScope {
  providers?: string[];
  merchantAccounts?: string[];
}

const inScope = (scope: RelayScope | undefined) =>
  scope &&
  or(
    scope.providers?.length ? inArray(outboxEvents.provider, scope.providers) : undefined,
    scope.merchantAccounts?.length ? inArray(outboxEvents.merchantAccount, scope.merchantAccounts) : undefined,
  );

export async function relayBatch(
  db: Db,
  limit: number,
  publish: (rows: OutboxRow[]) => Promise<void>,
  scope?: RelayScope,
): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx
      .select()
      .from(outboxEvents)
      .where(and(isNull(outboxEvents.publishedAt), inScope(scope)))
      .orderBy(asc(outboxEvents.id))
      .limit(limit)
      .for('update', { skipLocked: true });
    if (rows.length === 0) return 0;
    await publish(rows);
    await tx
      .update(outboxEvents)
      .set({ publishedAt: sql`now()` })
      .where(
        inArray(
          outboxEvents.id,
          rows.map((r) => r.id),
        ),
      );
    return rows.length;
  });
}

/** The relay's lag gauges: unpublished rows and the age of the oldest (through the partial index: no table scan). */
export async function outboxBacklog(db: Db): Promise<{ unpublished: number; oldestSeconds: number }> {
  const [row] = await db.execute<{ n: string; oldest: string | null }>(sql`
    select count(*) as n, extract(epoch from now() - min(created_at)) as oldest from ${outboxEvents} where published_at is null`);
  return { unpublished: Number(row?.n ?? 0), oldestSeconds: Math.max(0, Number(row?.oldest ?? 0)) };
}
