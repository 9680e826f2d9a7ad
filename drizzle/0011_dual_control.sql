-- A5: a resolution above the profile's dual-control amount is first proposed, then approved by a second principal
-- (or cancelled). One row per proposal; it is only ever closed, once.
CREATE TABLE "resolution_proposals" (
  "id" text PRIMARY KEY NOT NULL,
  "reconciliation_id" text NOT NULL REFERENCES "reconciliations"("id"),
  "decision" text NOT NULL,
  "reason" text NOT NULL,
  "post" jsonb,
  "proposed_by" text NOT NULL,
  "proposed_by_key" text NOT NULL,
  "proposed_via" text NOT NULL,
  "request_id" text,
  "proposed_at" timestamp with time zone DEFAULT now() NOT NULL,
  "closed" text,
  "closed_by" text,
  "closed_by_key" text,
  "closed_via" text,
  "closed_at" timestamp with time zone,
  CONSTRAINT "resolution_proposals_decision_ck" CHECK ("decision" in ('applied', 'rejected', 'acknowledged')),
  CONSTRAINT "resolution_proposals_closed_ck" CHECK ("closed" is null or "closed" in ('approved', 'cancelled')),
  CONSTRAINT "resolution_proposals_via_ck" CHECK ("proposed_via" in ('api', 'temporal'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "resolution_proposals_open_uq" ON "resolution_proposals" ("reconciliation_id") WHERE "closed" IS NULL;
--> statement-breakpoint
CREATE INDEX "resolution_proposals_reconciliation_idx" ON "resolution_proposals" ("reconciliation_id");
--> statement-breakpoint
-- A proposal is never deleted and its proposal part never changes; it is closed (approved or cancelled) once.
CREATE OR REPLACE FUNCTION apipay_resolution_proposal_close_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD.closed IS NOT NULL OR NEW.closed IS NULL
     OR (NEW.id, NEW.reconciliation_id, NEW.decision, NEW.reason, NEW.post, NEW.proposed_by, NEW.proposed_by_key, NEW.proposed_via, NEW.request_id, NEW.proposed_at)
        IS DISTINCT FROM (OLD.id, OLD.reconciliation_id, OLD.decision, OLD.reason, OLD.post, OLD.proposed_by, OLD.proposed_by_key, OLD.proposed_via, OLD.request_id, OLD.proposed_at) THEN
    RAISE EXCEPTION 'resolution_proposals: % refused (a proposal can only be closed, once)', TG_OP USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER resolution_proposals_close_only BEFORE UPDATE OR DELETE ON resolution_proposals
  FOR EACH ROW EXECUTE FUNCTION apipay_resolution_proposal_close_only();
--> statement-breakpoint
CREATE TRIGGER resolution_proposals_no_truncate BEFORE TRUNCATE ON resolution_proposals
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
-- A4/A5: who resolved (the principal's key id, or temporal:<identity>), through which way, and the approval.
ALTER TABLE "operator_resolutions" ADD COLUMN "operator_key" text;
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "via" text;
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "proposal_id" text;
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "proposed_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "approved_by" text;
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "approved_by_key" text;
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "approved_at" timestamp with time zone;
--> statement-breakpoint
-- A5 for L3: an adjustment above the dual-control amount is proposed first and posted when a second principal
-- approves it (or cancelled). Closed once, like a resolution proposal.
CREATE TABLE "adjustment_proposals" (
  "id" text PRIMARY KEY NOT NULL,
  "provider" text NOT NULL,
  "payment_reference" text NOT NULL,
  "amount_minor" bigint NOT NULL,
  "currency" text NOT NULL,
  "operator" text NOT NULL,
  "reason" text NOT NULL,
  "reconciliation_id" text,
  "idempotency_key" text,
  "proposed_by_key" text NOT NULL,
  "proposed_at" timestamp with time zone DEFAULT now() NOT NULL,
  "closed" text,
  "closed_by" text,
  "closed_by_key" text,
  "closed_at" timestamp with time zone,
  "adjustment_id" text,
  CONSTRAINT "adjustment_proposals_closed_ck" CHECK ("closed" is null or "closed" in ('approved', 'cancelled'))
);
--> statement-breakpoint
CREATE INDEX "adjustment_proposals_payment_idx" ON "adjustment_proposals" ("provider", "payment_reference");
--> statement-breakpoint
CREATE OR REPLACE FUNCTION apipay_adjustment_proposal_close_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD.closed IS NOT NULL OR NEW.closed IS NULL
     OR (NEW.id, NEW.provider, NEW.payment_reference, NEW.amount_minor, NEW.currency, NEW.operator, NEW.reason, NEW.reconciliation_id, NEW.idempotency_key, NEW.proposed_by_key, NEW.proposed_at)
        IS DISTINCT FROM (OLD.id, OLD.provider, OLD.payment_reference, OLD.amount_minor, OLD.currency, OLD.operator, OLD.reason, OLD.reconciliation_id, OLD.idempotency_key, OLD.proposed_by_key, OLD.proposed_at) THEN
    RAISE EXCEPTION 'adjustment_proposals: % refused (a proposal can only be closed, once)', TG_OP USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER adjustment_proposals_close_only BEFORE UPDATE OR DELETE ON adjustment_proposals
  FOR EACH ROW EXECUTE FUNCTION apipay_adjustment_proposal_close_only();
--> statement-breakpoint
CREATE TRIGGER adjustment_proposals_no_truncate BEFORE TRUNCATE ON adjustment_proposals
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD COLUMN "operator_key" text;
--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD COLUMN "proposal_id" text;
--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD COLUMN "approved_by" text;
--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD COLUMN "approved_by_key" text;
--> statement-breakpoint
ALTER TABLE "ledger_adjustments" ADD COLUMN "approved_at" timestamp with time zone;
