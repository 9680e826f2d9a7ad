-- R18: one trace per payment. The W3C traceparent of the span that wrote the row, where a trace crosses a table
-- rather than an RPC: a receipt the sweep starts (not the ingress), an outbox row the relay publishes, and the event
-- the dispatcher fanned out (its deliveries' trace; the console links to it). Null when tracing is off.
ALTER TABLE "webhook_receipts" ADD COLUMN "traceparent" text;
--> statement-breakpoint
ALTER TABLE "outbox_events" ADD COLUMN "traceparent" text;
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "traceparent" text;
