-- A12 (issue 23, item 1): people, not keys. A key belongs to a principal: a person (or a service) with a unique
-- name. Dual control compares principals, not keys (src/access/people.ts). Existing keys get one principal per
-- distinct name (case-insensitive): keys that shared a name are taken to be one person, the stricter reading.
-- Principals are never edited or deleted, like keys. Every audit row names the person behind its key (a trigger
-- fills actor_principal_id and actor_person from the key, so no code path can forget it).
CREATE TABLE "principals" (
  "id" text PRIMARY KEY NOT NULL,
  "name" text NOT NULL,
  "kind" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "created_by" text NOT NULL,
  CONSTRAINT "principals_kind_ck" CHECK ("kind" in ('human', 'service'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "principals_name_uq" ON "principals" (lower("name"));
--> statement-breakpoint
CREATE TRIGGER principals_append_only BEFORE UPDATE OR DELETE ON principals
  FOR EACH ROW EXECUTE FUNCTION public.apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER principals_no_truncate BEFORE TRUNCATE ON principals
  FOR EACH STATEMENT EXECUTE FUNCTION public.apipay_refuse_change();
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "principal_id" text REFERENCES "principals" ("id");
--> statement-breakpoint
INSERT INTO "principals" ("id", "name", "kind", "created_by")
  SELECT 'prn_m' || md5(lower(name)), min(name), CASE WHEN bool_and(role = 'merchant') THEN 'service' ELSE 'human' END, 'migration 0018'
    FROM "api_keys" GROUP BY lower(name);
--> statement-breakpoint
ALTER TABLE "api_keys" DISABLE TRIGGER api_keys_revoke_only;
--> statement-breakpoint
UPDATE "api_keys" SET "principal_id" = 'prn_m' || md5(lower(name));
--> statement-breakpoint
ALTER TABLE "api_keys" ENABLE TRIGGER api_keys_revoke_only;
--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "principal_id" SET NOT NULL;
--> statement-breakpoint
CREATE INDEX "api_keys_principal_idx" ON "api_keys" ("principal_id");
--> statement-breakpoint
-- A key's principal never changes either (the only change a key accepts is still its revocation, once).
CREATE OR REPLACE FUNCTION public.apipay_api_key_revoke_only() RETURNS trigger LANGUAGE plpgsql
  SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' OR OLD.revoked_at IS NOT NULL
     OR (NEW.id, NEW.name, NEW.role, NEW.merchant_account, NEW.secret_hash, NEW.created_at, NEW.created_by, NEW.principal_id)
        IS DISTINCT FROM (OLD.id, OLD.name, OLD.role, OLD.merchant_account, OLD.secret_hash, OLD.created_at, OLD.created_by, OLD.principal_id) THEN
    RAISE EXCEPTION 'api_keys: % refused (a key can only be revoked, once)', TG_OP USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "actor_principal_id" text;
--> statement-breakpoint
ALTER TABLE "audit_events" ADD COLUMN "actor_person" text;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.apipay_audit_person() RETURNS trigger LANGUAGE plpgsql
  SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  SELECT p.id, p.name INTO NEW.actor_principal_id, NEW.actor_person
    FROM public.api_keys k JOIN public.principals p ON p.id = k.principal_id
   WHERE k.id = NEW.actor_key_id;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER audit_events_person BEFORE INSERT ON audit_events
  FOR EACH ROW EXECUTE FUNCTION public.apipay_audit_person();
