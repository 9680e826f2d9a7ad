-- A27 (issue 29): dual control between two people of the identity provider. A proposal whose proposer is not an
-- IdP subject (an API key, a Temporal identity) needs two IdP subjects to approve it: the first approval is a row
-- here, the second posts. Append-only: an approval is never edited or withdrawn (cancel the proposal instead).
-- The audit log names an IdP subject as its person: actor_principal_id is the subject's key id (idp:<sub>@<issuer>)
-- and actor_person the name the IdP gave.
CREATE TABLE "proposal_approvals" (
  "proposal_id" text NOT NULL,
  "approver_key" text NOT NULL,
  "approver_name" text NOT NULL,
  "request_id" text,
  "approved_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "proposal_approvals_pk" PRIMARY KEY ("proposal_id", "approver_key"),
  CONSTRAINT "proposal_approvals_idp_ck" CHECK ("approver_key" LIKE 'idp:%')
);
--> statement-breakpoint
CREATE TRIGGER proposal_approvals_append_only BEFORE UPDATE OR DELETE ON proposal_approvals
  FOR EACH ROW EXECUTE FUNCTION public.apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER proposal_approvals_no_truncate BEFORE TRUNCATE ON proposal_approvals
  FOR EACH STATEMENT EXECUTE FUNCTION public.apipay_refuse_change();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.apipay_audit_person() RETURNS trigger LANGUAGE plpgsql
  SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF NEW.actor_key_id LIKE 'idp:%' THEN
    NEW.actor_principal_id := NEW.actor_key_id;
    NEW.actor_person := NEW.actor_name;
    RETURN NEW;
  END IF;
  SELECT p.id, p.name INTO NEW.actor_principal_id, NEW.actor_person
    FROM public.api_keys k JOIN public.principals p ON p.id = k.principal_id
   WHERE k.id = NEW.actor_key_id;
  RETURN NEW;
END;
$$;
