-- A10 (issue 23, item 6): every function of the schema pins its search_path (pg_catalog first, the session's
-- temporary schema last) and names the tables it reads with their schema, so an object the caller creates
-- cannot stand in for one the function means. The application role also loses TEMP and CREATE (src/db/grants.ts).
CREATE OR REPLACE FUNCTION public.apipay_check_balanced() RETURNS trigger LANGUAGE plpgsql
  SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE unbalanced text;
BEGIN
  SELECT e.currency INTO unbalanced FROM public.ledger_entries e
   WHERE e.transaction_id = NEW.transaction_id GROUP BY e.currency HAVING sum(e.amount_minor) <> 0 LIMIT 1;
  IF unbalanced IS NOT NULL THEN
    RAISE EXCEPTION 'ledger transaction % does not balance in %', NEW.transaction_id, unbalanced
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
ALTER FUNCTION public.apipay_refuse_change() SET search_path = pg_catalog, public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION public.apipay_api_key_revoke_only() SET search_path = pg_catalog, public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION public.apipay_resolution_proposal_close_only() SET search_path = pg_catalog, public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION public.apipay_adjustment_proposal_close_only() SET search_path = pg_catalog, public, pg_temp;
