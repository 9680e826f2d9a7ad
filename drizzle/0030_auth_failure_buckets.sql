-- A23: the throttles' counts of failed credentials and failed signatures, shared by every API replica (issue 30:
-- they were per process, so N replicas allowed N times the budget). One token bucket per (scope, key), written by
-- one upsert; a row past `expires_at` is a full bucket again, so deleting it changes nothing (the API prunes them).
-- UNLOGGED: a take writes no WAL and its commit waits for no flush (2-3 ms a failure against 8-12 ms logged, on the
-- shared test machine); a crash or a failover to a standby empties it, which only gives every client a full budget
-- again. It is a budget, not a record.
CREATE UNLOGGED TABLE "auth_failure_buckets" (
  "scope" text NOT NULL,
  "key" text NOT NULL,
  "tokens" double precision NOT NULL,
  "updated_at" timestamp with time zone NOT NULL,
  "expires_at" timestamp with time zone NOT NULL,
  "last_refused" boolean NOT NULL,
  CONSTRAINT "auth_failure_buckets_pk" PRIMARY KEY ("scope", "key")
);
--> statement-breakpoint
CREATE INDEX "auth_failure_buckets_expires_idx" ON "auth_failure_buckets" USING btree ("expires_at");
