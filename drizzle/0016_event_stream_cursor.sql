-- M7: the id of the transaction that wrote each event, so `apipay listen` can stream a merchant's events in
-- commit order with an exact resume cursor (a pg_snapshot, src/outbound/event-stream.ts). Nullable with a default:
-- no table rewrite; rows written before this migration are never streamed (a stream starts at "now").
ALTER TABLE "events" ADD COLUMN "stream_xid" xid8;
--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "stream_xid" SET DEFAULT pg_current_xact_id();
--> statement-breakpoint
CREATE INDEX "events_stream_idx" ON "events" USING btree ("merchant_account","stream_xid");
