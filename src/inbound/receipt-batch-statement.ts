// I4/I5: the one statement that writes a batch of receipts (src/inbound/receipt-writer.ts): registry rows and
// receipt rows atomically, the winners of ON CONFLICT only.
import type { Sql } from 'postgres';
import type { Db } from '../db/client.js';

export interface ReceiptToWrite {
  provider: string;
  providerEventId: string;
  rawBody: Buffer;
  headers: Record<string, string>;
  receivedAt: Date;
  /** R18: the ingress span's W3C traceparent (null when tracing is off). */
  traceparent?: string | null;
}

export const keyOf = (provider: string, id: string) => `${provider}\u0000${id}`;

/**
 * One statement, hence one atomic transaction and one round trip, for a whole batch: one bind parameter per column
 * (unnest), registry rows first (ON CONFLICT DO NOTHING decides who is new), then receipts for the winners only.
 */
export async function commitBatch(db: Db, receipts: ReceiptToWrite[]): Promise<Map<string, number>> {
  const client = (db as unknown as { $client: Sql }).$client;
  const rows = await client<{ id: string; provider: string; provider_event_id: string }[]>`
    with input as (
      select * from unnest(
        ${receipts.map((r) => r.provider)}::text[],
        ${receipts.map((r) => r.providerEventId)}::text[],
        ${receipts.map((r) => r.rawBody.toString('base64'))}::text[],
        ${receipts.map((r) => JSON.stringify(r.headers))}::text[],
        ${receipts.map((r) => r.receivedAt.toISOString())}::text[],
        ${receipts.map((r) => r.traceparent ?? null)}::text[]
      ) as t(provider, provider_event_id, raw_body, headers, received_at, traceparent)
    ), registered as (
      insert into provider_event_registry (provider, provider_event_id)
      select provider, provider_event_id from input
      on conflict do nothing
      returning provider, provider_event_id
    )
    insert into webhook_receipts (provider, provider_event_id, raw_body, headers, received_at, traceparent)
    select i.provider, i.provider_event_id, decode(i.raw_body, 'base64'), i.headers::jsonb, i.received_at::timestamptz, i.traceparent
      from input i join registered r using (provider, provider_event_id)
    -- A receipt without its registry row cannot come from this writer; never fail a whole batch over one.
    on conflict do nothing
    returning id, provider, provider_event_id`;
  const ids = new Map<string, number>();
  for (const row of rows) ids.set(keyOf(row.provider, row.provider_event_id), Number(row.id));
  return ids;
}
