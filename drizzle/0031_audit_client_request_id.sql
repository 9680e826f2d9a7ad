-- A24: audit rows carry the server's request id in request_id; the X-Request-Id a client sent is kept beside it.
ALTER TABLE "audit_events" ADD COLUMN IF NOT EXISTS "client_request_id" text;
