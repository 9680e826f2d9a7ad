-- Issue 13 L2/L3: resolutions say what they posted (basis, amount, currency, the provider's currency), may be
-- `acknowledged` without posting, and operators post audited adjustments. Append-only like the other audit tables.
ALTER TABLE "operator_resolutions" DROP CONSTRAINT "operator_resolutions_decision_ck";
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD CONSTRAINT "operator_resolutions_decision_ck" CHECK ("decision" in ('applied', 'rejected', 'acknowledged'));
--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD COLUMN "provider_currency" text, ADD COLUMN "post_basis" text,
  ADD COLUMN "posted_amount_minor" bigint, ADD COLUMN "posted_currency" text;
--> statement-breakpoint
CREATE TABLE "ledger_adjustments" (
  "id" text PRIMARY KEY NOT NULL,
  "provider" text NOT NULL,
  "payment_reference" text NOT NULL,
  "amount_minor" bigint NOT NULL,
  "currency" text NOT NULL,
  "operator" text NOT NULL,
  "reason" text NOT NULL,
  "reconciliation_id" text REFERENCES "reconciliations"("id"),
  "ledger_transaction_id" text NOT NULL REFERENCES "ledger_transactions"("id"),
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "ledger_adjustments_nonzero_ck" CHECK ("amount_minor" <> 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_adjustments_transaction_uq" ON "ledger_adjustments" USING btree ("ledger_transaction_id");
--> statement-breakpoint
CREATE INDEX "ledger_adjustments_payment_idx" ON "ledger_adjustments" USING btree ("provider", "payment_reference");
--> statement-breakpoint
CREATE TRIGGER ledger_adjustments_append_only BEFORE UPDATE OR DELETE ON ledger_adjustments
  FOR EACH ROW EXECUTE FUNCTION apipay_refuse_change();
