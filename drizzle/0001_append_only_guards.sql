-- Immutability guards: the provider-event registry (I5), operator resolutions (I11) and the ledger (I9) are
-- append-only for every role, whatever the application code does.
CREATE OR REPLACE FUNCTION apipay_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'table % is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER provider_event_registry_append_only BEFORE UPDATE OR DELETE ON provider_event_registry
  FOR EACH ROW EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER provider_event_registry_no_truncate BEFORE TRUNCATE ON provider_event_registry
  FOR EACH STATEMENT EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER operator_resolutions_append_only BEFORE UPDATE OR DELETE ON operator_resolutions
  FOR EACH ROW EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
  FOR EACH ROW EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION apipay_refuse_change();
--> statement-breakpoint
-- Double entry: at commit, every transaction's entries sum to zero per currency.
CREATE OR REPLACE FUNCTION apipay_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE unbalanced text;
BEGIN
  SELECT currency INTO unbalanced FROM ledger_entries
   WHERE transaction_id = NEW.transaction_id GROUP BY currency HAVING sum(amount_minor) <> 0 LIMIT 1;
  IF unbalanced IS NOT NULL THEN
    RAISE EXCEPTION 'ledger transaction % does not balance in %', NEW.transaction_id, unbalanced
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION apipay_check_balanced();
