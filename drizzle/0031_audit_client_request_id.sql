-- A24: audit rows carry the server's request id in request_id; the X-Request-Id a client sent is kept beside it.
ALTER TABLE "audit_events" ADD COLUMN IF NOT EXISTS "client_request_id" text;
--> statement-breakpoint
-- A21 with A24: the audit row the ledger functions of 0029 write carries the client's id too (as src/audit/record.ts).
CREATE OR REPLACE FUNCTION public.apipay_insert_audit(p_audit jsonb, p_extra jsonb) RETURNS void LANGUAGE sql
  SET search_path = pg_catalog, public, pg_temp AS $$
  INSERT INTO public.audit_events (id, actor_key_id, actor_name, actor_role, action, target_type, target_id, before, after, request_id, client_request_id, via)
  VALUES (p_audit->>'id', p_audit->>'actor_key_id', p_audit->>'actor_name', p_audit->>'actor_role', p_audit->>'action', p_audit->>'target_type',
          p_audit->>'target_id', nullif(p_audit->'before', 'null'::jsonb), coalesce(nullif(p_audit->'after', 'null'::jsonb), '{}'::jsonb) || coalesce(p_extra, '{}'::jsonb),
          p_audit->>'request_id', p_audit->>'client_request_id', p_audit->>'via')
$$;
