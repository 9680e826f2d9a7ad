-- A21 (issue 30, item 2): the database accepts only the ledger's own shapes. The application role loses INSERT and
-- UPDATE on the ledger, api_keys, principals and the money columns of reconciliations (src/db/grants.ts); it writes
-- them through these SECURITY DEFINER functions, owned by the migration owner, with a pinned search_path (A10) and
-- EXECUTE for the application role only (granted by src/db/grants.ts, which knows the role's name).
--
-- The content hash of a posting (src/ledger/postings.ts contentHash): sha256 of
-- {"key":…,"kind":…,"payment":"<provider>:<reference>","entries":[[account,currency,amount],…]} with the entries
-- sorted by their JSON text, byte by byte (COLLATE "C"), exactly as JSON.stringify writes it.
CREATE OR REPLACE FUNCTION public.apipay_ledger_content_hash(p_key text, p_kind text, p_provider text, p_ref text, p_entries jsonb)
  RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT encode(sha256(convert_to(
    '{"key":' || to_json(p_key)::text || ',"kind":' || to_json(p_kind)::text
      || ',"payment":' || to_json(p_provider || ':' || p_ref)::text || ',"entries":['
      || coalesce((SELECT string_agg(x.j, ',' ORDER BY x.j COLLATE "C")
                     FROM (SELECT '[' || to_json(e->>'account')::text || ',' || to_json(e->>'currency')::text || ','
                                  || to_json(e->>'amount_minor')::text || ']' AS j
                             FROM pg_catalog.jsonb_array_elements(p_entries) e) x), '')
      || ']}', 'UTF8')), 'hex')
$$;
--> statement-breakpoint
-- The same content as a transaction already posted (for rows hashed before 0029, whose entries were sorted by the
-- locale): kind, payment and the entries as a multiset.
CREATE OR REPLACE FUNCTION public.apipay_ledger_same_content(p_id text, p_kind text, p_ref text, p_entries jsonb)
  RETURNS boolean LANGUAGE sql STABLE
  SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT t.kind = p_kind AND t.payment_reference = p_ref
     AND (SELECT array_agg(x ORDER BY x COLLATE "C") FROM (SELECT e.account || '|' || e.currency || '|' || e.amount_minor::text AS x
            FROM public.ledger_entries e WHERE e.transaction_id = p_id) a)
       = (SELECT array_agg(x ORDER BY x COLLATE "C") FROM (SELECT (e->>'account') || '|' || (e->>'currency') || '|' || (e->>'amount_minor') AS x
            FROM pg_catalog.jsonb_array_elements(p_entries) e) b)
    FROM public.ledger_transactions t WHERE t.id = p_id
$$;
--> statement-breakpoint
-- One posting, whole: header and every entry. Answers a status row rather than raising for the outcomes the
-- application maps to its own errors (replayed, conflict, capture_not_posted, exceeds_settled), so the caller's
-- transaction stays usable; raises for a shape the ledger never writes. Takes the payment's advisory lock (the
-- one src/ledger/store.ts takes; re-entrant), so the I10 bound read here holds until the caller commits.
CREATE OR REPLACE FUNCTION public.apipay_post_ledger_transaction(p_header jsonb, p_entries jsonb)
  RETURNS TABLE (status text, transaction_id text, posted_at text, provider_event_id text, actor text, settled_minor text, requested_minor text)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_id text := p_header->>'id';
  v_key text := p_header->>'idempotency_key';
  v_kind text := p_header->>'kind';
  v_provider text := p_header->>'provider';
  v_ref text := p_header->>'payment_reference';
  v_hash text;
  v_unbalanced text;
  v_existing public.ledger_transactions%ROWTYPE;
  v_row public.ledger_transactions%ROWTYPE;
  v_over record;
BEGIN
  IF v_id IS NULL OR v_key IS NULL OR v_kind IS NULL OR v_provider IS NULL OR v_ref IS NULL OR p_header->>'effective_at' IS NULL THEN
    RAISE EXCEPTION 'ledger posting: id, idempotency_key, kind, provider, payment_reference and effective_at are required' USING ERRCODE = 'check_violation';
  END IF;
  IF v_kind NOT IN ('payment', 'refund', 'chargeback', 'reversal', 'provisional', 'provisional_release', 'adjustment') THEN
    RAISE EXCEPTION 'ledger posting %: unknown kind %', v_key, v_kind USING ERRCODE = 'check_violation';
  END IF;
  IF jsonb_typeof(p_entries) IS DISTINCT FROM 'array' OR jsonb_array_length(p_entries) < 2 THEN
    RAISE EXCEPTION 'ledger posting %: a transaction has at least two entries', v_key USING ERRCODE = 'check_violation';
  END IF;
  IF EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(p_entries) e
              WHERE jsonb_typeof(e) IS DISTINCT FROM 'object' OR jsonb_typeof(e->'account') IS DISTINCT FROM 'string' OR e->>'account' = ''
                 OR coalesce(e->>'currency', '') !~ '^[A-Z]{3}$' OR jsonb_typeof(e->'amount_minor') IS DISTINCT FROM 'string'
                 OR e->>'amount_minor' !~ '^-?[1-9][0-9]{0,17}$') THEN
    RAISE EXCEPTION 'ledger posting %: malformed entry (account, an ISO 4217 currency, a non-zero integer amount_minor string)', v_key USING ERRCODE = 'check_violation';
  END IF;
  SELECT e->>'currency' INTO v_unbalanced FROM pg_catalog.jsonb_array_elements(p_entries) e
   GROUP BY e->>'currency' HAVING sum((e->>'amount_minor')::numeric) <> 0 LIMIT 1;
  IF v_unbalanced IS NOT NULL THEN
    RAISE EXCEPTION 'ledger posting % does not balance in %', v_key, v_unbalanced USING ERRCODE = 'check_violation';
  END IF;
  v_hash := public.apipay_ledger_content_hash(v_key, v_kind, v_provider, v_ref, p_entries);
  IF p_header ? 'content_hash' AND p_header->>'content_hash' IS DISTINCT FROM (v_hash) THEN
    RAISE EXCEPTION 'ledger posting %: content hash does not match its entries', v_key USING ERRCODE = 'check_violation';
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('ledger:' || v_provider || ':' || v_ref, 0));
  SELECT * INTO v_existing FROM public.ledger_transactions t WHERE t.idempotency_key = v_key;
  IF FOUND THEN
    RETURN QUERY SELECT
      CASE WHEN v_existing.content_hash = v_hash OR public.apipay_ledger_same_content(v_existing.id, v_kind, v_ref, p_entries) THEN 'replayed' ELSE 'conflict' END,
      v_existing.id, to_json(v_existing.posted_at)#>>'{}', v_existing.metadata->>'providerEventId', v_existing.metadata->>'actor', NULL::text, NULL::text;
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM public.ledger_transactions t WHERE t.id = v_id) THEN
    RAISE EXCEPTION 'ledger transaction % already has its entries', v_id USING ERRCODE = 'check_violation';
  END IF;
  -- I10: money goes back only after its capture, and never more than is still settled on the payment.
  IF v_kind IN ('refund', 'chargeback', 'reversal')
     AND NOT EXISTS (SELECT 1 FROM public.ledger_transactions t WHERE t.idempotency_key = v_provider || ':' || v_ref || ':payment') THEN
    RETURN QUERY SELECT 'capture_not_posted'::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::text;
    RETURN;
  END IF;
  SELECT d.account, d.currency, d.debit, -coalesce((SELECT sum(l.amount_minor) FROM public.ledger_entries l WHERE l.account = d.account AND l.currency = d.currency), 0) AS settled
    INTO v_over
    FROM (SELECT e->>'account' AS account, e->>'currency' AS currency, sum((e->>'amount_minor')::numeric) AS debit
            FROM pg_catalog.jsonb_array_elements(p_entries) e WHERE e->>'account' LIKE 'payments:%' GROUP BY 1, 2) d
   WHERE d.debit > 0
     AND d.debit > -coalesce((SELECT sum(l.amount_minor) FROM public.ledger_entries l WHERE l.account = d.account AND l.currency = d.currency), 0)
   LIMIT 1;
  IF FOUND THEN
    RETURN QUERY SELECT 'exceeds_settled'::text, NULL::text, NULL::text, NULL::text, NULL::text, v_over.settled::text, v_over.debit::text;
    RETURN;
  END IF;
  INSERT INTO public.ledger_transactions (id, idempotency_key, content_hash, kind, payment_reference, effective_at, description, metadata)
  VALUES (v_id, v_key, v_hash, v_kind, v_ref, (p_header->>'effective_at')::timestamptz, p_header->>'description',
          coalesce(p_header->'metadata', '{}'::jsonb) || jsonb_build_object('provider', v_provider))
  RETURNING * INTO v_row;
  INSERT INTO public.ledger_entries (transaction_id, account, amount_minor, currency)
  SELECT v_id, e->>'account', (e->>'amount_minor')::bigint, e->>'currency' FROM pg_catalog.jsonb_array_elements(p_entries) e;
  RETURN QUERY SELECT 'posted'::text, v_row.id, to_json(v_row.posted_at)#>>'{}', v_row.metadata->>'providerEventId', v_row.metadata->>'actor', NULL::text, NULL::text;
END;
$$;
--> statement-breakpoint
-- The audit log's row (A3), as src/audit/record.ts builds it; `extra` is merged into its `after`.
CREATE OR REPLACE FUNCTION public.apipay_insert_audit(p_audit jsonb, p_extra jsonb) RETURNS void LANGUAGE sql
  SET search_path = pg_catalog, public, pg_temp AS $$
  INSERT INTO public.audit_events (id, actor_key_id, actor_name, actor_role, action, target_type, target_id, before, after, request_id, via)
  VALUES (p_audit->>'id', p_audit->>'actor_key_id', p_audit->>'actor_name', p_audit->>'actor_role', p_audit->>'action', p_audit->>'target_type',
          p_audit->>'target_id', nullif(p_audit->'before', 'null'::jsonb), coalesce(nullif(p_audit->'after', 'null'::jsonb), '{}'::jsonb) || coalesce(p_extra, '{}'::jsonb),
          p_audit->>'request_id', p_audit->>'via')
$$;
--> statement-breakpoint
-- L3: an operator's adjustment, whole: the posting, its ledger_adjustments row and its audit row in one call. The
-- row must say what the posting does (same payment, currency, and the amount the payment's account is credited).
CREATE OR REPLACE FUNCTION public.apipay_post_adjustment(p_header jsonb, p_entries jsonb, p_adjustment jsonb, p_audit jsonb)
  RETURNS TABLE (status text, transaction_id text, posted_at text, provider_event_id text, actor text, settled_minor text, requested_minor text, adjustment_id text)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE
  r record;
  v_credit numeric;
BEGIN
  IF p_header->>'kind' IS DISTINCT FROM 'adjustment' OR p_adjustment->>'provider' IS DISTINCT FROM (p_header->>'provider')
     OR p_adjustment->>'payment_reference' IS DISTINCT FROM (p_header->>'payment_reference') THEN
    RAISE EXCEPTION 'adjustment: the row and its posting name different payments' USING ERRCODE = 'check_violation';
  END IF;
  SELECT -sum((e->>'amount_minor')::numeric) INTO v_credit FROM pg_catalog.jsonb_array_elements(p_entries) e
   WHERE e->>'account' = 'payments:' || (p_header->>'provider') || ':' || (p_header->>'payment_reference') AND e->>'currency' = p_adjustment->>'currency';
  IF v_credit IS DISTINCT FROM (p_adjustment->>'amount_minor')::numeric THEN
    RAISE EXCEPTION 'adjustment: the row''s amount is not what its posting credits the payment' USING ERRCODE = 'check_violation';
  END IF;
  SELECT * INTO r FROM public.apipay_post_ledger_transaction(p_header, p_entries);
  IF r.status = 'posted' THEN
    INSERT INTO public.ledger_adjustments (id, provider, payment_reference, amount_minor, currency, operator, reason, reconciliation_id, ledger_transaction_id,
                                           operator_key, proposal_id, approved_by, approved_by_key, approved_at)
    VALUES (p_adjustment->>'id', p_adjustment->>'provider', p_adjustment->>'payment_reference', (p_adjustment->>'amount_minor')::bigint, p_adjustment->>'currency',
            p_adjustment->>'operator', p_adjustment->>'reason', p_adjustment->>'reconciliation_id', r.transaction_id, p_adjustment->>'operator_key',
            p_adjustment->>'proposal_id', p_adjustment->>'approved_by', p_adjustment->>'approved_by_key',
            CASE WHEN p_adjustment->>'proposal_id' IS NULL THEN NULL ELSE now() END);
    PERFORM public.apipay_insert_audit(p_audit, jsonb_build_object('ledger_transaction_id', r.transaction_id));
    RETURN QUERY SELECT r.status, r.transaction_id, r.posted_at, r.provider_event_id, r.actor, r.settled_minor, r.requested_minor, p_adjustment->>'id';
    RETURN;
  END IF;
  RETURN QUERY SELECT r.status, r.transaction_id, r.posted_at, r.provider_event_id, r.actor, r.settled_minor, r.requested_minor,
    (SELECT a.id FROM public.ledger_adjustments a WHERE a.ledger_transaction_id = r.transaction_id);
END;
$$;
--> statement-breakpoint
-- A12: the principal named p_name (case-insensitive), created when there is none yet.
CREATE OR REPLACE FUNCTION public.apipay_create_principal(p_id text, p_name text, p_kind text, p_created_by text)
  RETURNS TABLE (id text, name text, kind text, created_at text, created_by text, created boolean)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE v public.principals%ROWTYPE;
BEGIN
  IF p_name IS NULL OR btrim(p_name) = '' OR p_created_by IS NULL OR p_id !~ '^prn_[0-9a-z]{26}$' THEN
    RAISE EXCEPTION 'principal: a prn_ id, a name and its creator are required' USING ERRCODE = 'check_violation';
  END IF;
  INSERT INTO public.principals AS p (id, name, kind, created_by) VALUES (p_id, p_name, p_kind, p_created_by) ON CONFLICT DO NOTHING RETURNING * INTO v;
  IF FOUND THEN
    RETURN QUERY SELECT v.id, v.name, v.kind, to_json(v.created_at)#>>'{}', v.created_by, true;
    RETURN;
  END IF;
  RETURN QUERY SELECT p.id, p.name, p.kind, to_json(p.created_at)#>>'{}', p.created_by, false FROM public.principals p WHERE lower(p.name) = lower(p_name);
END;
$$;
--> statement-breakpoint
-- A1/A12: a key, its person (found or created) and its audit row in one call; the audit's `after` gets the person.
CREATE OR REPLACE FUNCTION public.apipay_create_api_key(p_key jsonb, p_person jsonb, p_audit jsonb)
  RETURNS TABLE (key_id text, principal_id text, person_name text, person_kind text, person_created boolean)
  LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE p record;
BEGIN
  IF p_key->>'id' !~ '^apk_[0-9a-z]{26}$' OR coalesce(p_key->>'secret_hash', '') !~ '^[0-9a-f]{64}$' THEN
    RAISE EXCEPTION 'api key: an apk_ id and the SHA-256 of its secret are required' USING ERRCODE = 'check_violation';
  END IF;
  SELECT * INTO p FROM public.apipay_create_principal(p_person->>'id', p_person->>'name', p_person->>'kind', p_key->>'created_by');
  INSERT INTO public.api_keys (id, name, role, merchant_account, secret_hash, created_by, created_at, principal_id)
  VALUES (p_key->>'id', p_key->>'name', p_key->>'role', p_key->>'merchant_account', decode(p_key->>'secret_hash', 'hex'), p_key->>'created_by',
          coalesce((p_key->>'created_at')::timestamptz, now()), p.id);
  PERFORM public.apipay_insert_audit(p_audit, jsonb_build_object('principal_id', p.id, 'person', p.name, 'person_kind', p.kind, 'person_created', p.created));
  RETURN QUERY SELECT p_key->>'id', p.id, p.name, p.kind, p.created;
END;
$$;
--> statement-breakpoint
-- A1: a key's revocation, once (the trigger of 0009/0018 refuses any other change); answers what the key was and
-- became (the caller audits it in the same transaction), or nothing when there is no such key.
CREATE OR REPLACE FUNCTION public.apipay_revoke_api_key(p_id text, p_revoked_by text, p_revoked_at timestamptz)
  RETURNS TABLE (was_revoked boolean) LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE v public.api_keys%ROWTYPE;
BEGIN
  SELECT * INTO v FROM public.api_keys k WHERE k.id = p_id FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  IF v.revoked_at IS NULL THEN
    UPDATE public.api_keys k SET revoked_at = coalesce(p_revoked_at, now()), revoked_by = p_revoked_by WHERE k.id = p_id;
  END IF;
  RETURN QUERY SELECT v.revoked_at IS NOT NULL;
END;
$$;
--> statement-breakpoint
-- The reconciliation's projection with its transition (R14), in one call: the event's own columns (payment, amount,
-- currency) are written once and never change; the provider's answer (the currency the money policy reads) is set
-- only here, as the workflow's activity records it (that the answer is the provider's is not this function's to
-- know). Answers whether the transition is new.
CREATE OR REPLACE FUNCTION public.apipay_record_reconciliation(p jsonb) RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE v_n int;
BEGIN
  INSERT INTO public.reconciliations AS r (id, provider, provider_event_id, event_type, payment_reference, amount_minor, currency, effective_at, provider_object_id,
                                           acknowledged_at, state, reason, provider_amount_minor, provider_currency, ledger_transaction_id, discrepancy, updated_at)
  VALUES (p->>'id', p->>'provider', p->>'provider_event_id', p->>'event_type', p->>'payment_reference', (p->>'amount_minor')::bigint, p->>'currency',
          (p->>'effective_at')::timestamptz, p->>'provider_object_id', (p->>'acknowledged_at')::timestamptz, p->>'state', p->>'reason',
          (p->>'provider_amount_minor')::bigint, p->>'provider_currency', p->>'ledger_transaction_id', nullif(p->'discrepancy', 'null'::jsonb),
          coalesce((p->>'updated_at')::timestamptz, now()))
  ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, reason = EXCLUDED.reason, provider_amount_minor = EXCLUDED.provider_amount_minor,
    provider_currency = EXCLUDED.provider_currency, ledger_transaction_id = EXCLUDED.ledger_transaction_id, discrepancy = EXCLUDED.discrepancy,
    updated_at = EXCLUDED.updated_at;
  IF p->>'from_state' IS NULL THEN RETURN false; END IF;
  INSERT INTO public.reconciliation_transitions (reconciliation_id, from_state, to_state, actor, reason)
  VALUES (p->>'id', p->>'from_state', p->>'state', p->>'actor', p->>'reason') ON CONFLICT DO NOTHING;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n > 0;
END;
$$;
--> statement-breakpoint
-- For every role, the owner included: a transaction's entries are written by one statement, with nothing added to
-- it later (the attack of two balanced entries appended to a transaction committed long ago).
CREATE OR REPLACE FUNCTION public.apipay_entries_written_once() RETURNS trigger LANGUAGE plpgsql
  SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE v_bad text;
BEGIN
  SELECT a.transaction_id INTO v_bad FROM (SELECT n.transaction_id, count(*) AS added FROM (TABLE new_entries) n GROUP BY 1) a
   WHERE (SELECT count(*) FROM public.ledger_entries e WHERE e.transaction_id = a.transaction_id) <> a.added LIMIT 1;
  IF v_bad IS NOT NULL THEN
    RAISE EXCEPTION 'ledger transaction % already has its entries', v_bad USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_entries_written_once AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION public.apipay_entries_written_once();
--> statement-breakpoint
REVOKE ALL ON FUNCTION public.apipay_ledger_content_hash(text, text, text, text, jsonb), public.apipay_ledger_same_content(text, text, text, jsonb),
  public.apipay_post_ledger_transaction(jsonb, jsonb), public.apipay_insert_audit(jsonb, jsonb), public.apipay_post_adjustment(jsonb, jsonb, jsonb, jsonb),
  public.apipay_create_principal(text, text, text, text), public.apipay_create_api_key(jsonb, jsonb, jsonb),
  public.apipay_revoke_api_key(text, text, timestamptz), public.apipay_record_reconciliation(jsonb), public.apipay_entries_written_once() FROM PUBLIC;
