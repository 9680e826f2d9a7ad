// O3, O4, P14: the two multi-row INSERTs of the dispatcher's fan-out (./fan-out.ts), each one statement with one
// bind parameter per column (INSERT … SELECT FROM unnest), in the fan-out's transaction. Built with drizzle's VALUES
// list they cost the dispatcher ~1.8 s of CPU per 20,000 deliveries (an object and type checks per value); the rows,
// the conflict rules and the defaults (status PENDING, stream_xid, timestamps) are the same.
import { rawClient, type Tx } from '../db/client.js';
import type { RawMessage } from '../kafka/types.js';
import type { ValidEvent } from '../outbound/envelope.js';

export interface EventRow {
  message: RawMessage;
  value: ValidEvent;
  traceparent: string | null;
}

/** O3: the events not seen before (the primary key on event_public_id decides); returns the ids inserted now. */
export async function insertEvents(tx: Tx, rows: EventRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const col = <T>(f: (r: EventRow) => T) => rows.map(f);
  const inserted = await rawClient(tx)<{ event_public_id: string }[]>`
    insert into events (event_public_id, merchant_account, type, livemode, created_unix, body, source_topic, source_partition, source_offset, traceparent)
    select t.id, t.merchant, t.type, t.livemode::boolean, t.created_unix, decode(t.body, 'base64'), t.topic, t.part, t.off, t.trace
      from unnest(${col((r) => r.value.eventPublicId)}::text[], ${col((r) => r.value.merchantAccount)}::text[],
                  ${col((r) => r.value.type)}::text[], ${col((r) => String(r.value.livemode))}::text[],
                  ${col((r) => r.value.createdUnix)}::bigint[], ${col((r) => r.value.body.toString('base64'))}::text[],
                  ${col((r) => r.message.topic)}::text[], ${col((r) => r.message.partition)}::int[],
                  ${col((r) => r.message.offset)}::text[], ${col((r) => r.traceparent)}::text[])
           as t(id, merchant, type, livemode, created_unix, body, topic, part, off, trace)
    on conflict (event_public_id) do nothing
    returning event_public_id`;
  return new Set(inserted.map((r) => r.event_public_id));
}

export interface DeliveryRow {
  id: string;
  eventPublicId: string;
  endpointId: string;
  merchantAccount: string;
  sequence?: number | null;
  handoffSince?: Date | null;
  parkedSince?: Date | null;
}

/** O4: the new PENDING deliveries (M3 sequence, P1 hand-off marker, P13 parked), every other column its default. */
export async function insertDeliveries(tx: Tx, rows: DeliveryRow[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: DeliveryRow) => T) => rows.map(f);
  const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
  // Timestamps travel as text: drizzle passes timestamptz[] parameters through unserialized (its driver setup).
  await rawClient(tx)`
    insert into deliveries (id, event_public_id, endpoint_id, merchant_account, sequence, handoff_since, parked_since)
    select t.id, t.event, t.endpoint, t.merchant, t.sequence, t.handoff::timestamptz, t.parked::timestamptz
      from unnest(${col((r) => r.id)}::text[], ${col((r) => r.eventPublicId)}::text[], ${col((r) => r.endpointId)}::text[],
                  ${col((r) => r.merchantAccount)}::text[], ${col((r) => r.sequence ?? null)}::bigint[],
                  ${col((r) => iso(r.handoffSince))}::text[], ${col((r) => iso(r.parkedSince))}::text[])
           as t(id, event, endpoint, merchant, sequence, handoff, parked)`;
}
