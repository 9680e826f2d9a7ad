-- A1: API keys per principal. Only the SHA-256 of the secret is stored; a key is revoked (time and who), never
-- deleted or edited, so every credential that ever existed stays accountable.
CREATE TABLE "api_keys" (
  "id" text PRIMARY KEY NOT NULL,
  "name" text NOT NULL,
  "role" text NOT NULL,
  "merchant_account" text,
  "secret_hash" bytea NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "created_by" text NOT NULL,
  "revoked_at" timestamp with time zone,
  "revoked_by" text,
  CONSTRAINT "api_keys_role_ck" CHECK ("role" in ('viewer', 'operator', 'admin', 'merchant')),
  CONSTRAINT "api_keys_merchant_ck" CHECK (("role" = 'merchant') = ("merchant_account" is not null)),
  CONSTRAINT "api_keys_revoked_ck" CHECK (("revoked_at" is null) = ("revoked_by" is null))
);
--> statement-breakpoint
CREATE INDEX "api_keys_merchant_idx" ON "api_keys" USING btree ("merchant_account");
--> statement-breakpoint
-- The only change a key accepts is its revocation, once.
CREATE OR REPLACE FUNCTION apipay_api_key_revoke_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD.revoked_at IS NOT NULL
     OR (NEW.id, NEW.name, NEW.role, NEW.merchant_account, NEW.secret_hash, NEW.created_at, NEW.created_by)
        IS DISTINCT FROM (OLD.id, OLD.name, OLD.role, OLD.merchant_account, OLD.secret_hash, OLD.created_at, OLD.created_by) THEN
    RAISE EXCEPTION 'api_keys: % refused (a key can only be revoked, once)', TG_OP USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER api_keys_revoke_only BEFORE UPDATE OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION apipay_api_key_revoke_only();
--> statement-breakpoint
-- A6: TRUNCATE skips row triggers; the ledger and the audit rows refuse it for every role, like the registry.
CREATE TRIGGER operator_resolutions_no_truncate BEFORE TRUNCATE ON operator_resolutions
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER api_keys_no_truncate BEFORE TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
-- A8: which master key sealed each endpoint secret (null: a row from before key ids), so the key can be rotated.
ALTER TABLE "endpoint_secrets" ADD COLUMN "key_id" text;
