-- Hand-written: security hardening (issue 7 §4).
--
-- 1. SECURITY DEFINER functions resolve names with search_path = pg_catalog, pg_temp and name
--    every object schema-qualified. With "pg_catalog, public", pg_temp is searched FIRST for
--    tables and views: a role that may create temporary objects could shadow job_runs (a temp
--    table with a trigger) or api_keys (a temp view) and run its code as the function's owner.
-- 2. No role but the owner may create temporary objects in this database (REVOKE TEMPORARY
--    FROM PUBLIC) or objects in schema public (the auth and operator roles had CREATE only so
--    that ALTER FUNCTION ... OWNER TO could name them: a later migration that gives them a
--    function grants CREATE for that statement and revokes it again, see the end of this file).
--    migrations.Up repeats the database-level REVOKE on every run (a database created from a
--    template or restored from a dump starts with the default ACL again).
-- 3. maintenance_purge takes no arguments: its cadence and retention are constants here, so the
--    app role cannot ask it to delete younger events ('0 seconds', '-100 years' deleted all).
-- 4. Least privilege for the app role: nothing on api_keys (auth_credential and
--    webhook_credential read keys as brokerdesk_auth), only SELECT on users (no endpoint writes
--    users; the operator does), no DELETE where the API never deletes.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION auth_credential(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT k.id, k.prefix::text, k.hash, k.kind::text, k.env::text, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role::text
  FROM public.api_keys k
  JOIN public.companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.hash = p_hash AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active');
END $$;
-- +goose StatementEnd

DROP FUNCTION public.maintenance_purge(interval, interval);
-- Purge: events older than 30 days and expired idempotency records, for every company, at most
-- once an hour whoever calls (job_runs: the first UPDATE wins, the others find the row fresh).
-- +goose StatementBegin
CREATE FUNCTION public.maintenance_purge()
RETURNS TABLE (ran boolean, events bigint, idempotency_keys bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  n_events bigint := 0;
  n_keys bigint := 0;
BEGIN
  INSERT INTO public.job_runs (id, last_run_at) VALUES ('purge', '-infinity') ON CONFLICT (id) DO NOTHING;
  UPDATE public.job_runs SET last_run_at = now() WHERE id = 'purge' AND last_run_at <= now() - interval '1 hour';
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, 0::bigint, 0::bigint;
    RETURN;
  END IF;
  DELETE FROM public.events WHERE occurred_at < now() - interval '30 days';
  GET DIAGNOSTICS n_events = ROW_COUNT;
  DELETE FROM public.idempotency_keys WHERE expires_at < now();
  GET DIAGNOSTICS n_keys = ROW_COUNT;
  RETURN QUERY SELECT true, n_events, n_keys;
END $$;
-- +goose StatementEnd
ALTER FUNCTION public.maintenance_purge() OWNER TO brokerdesk_operator;
REVOKE ALL ON FUNCTION public.maintenance_purge() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.maintenance_purge() TO brokerdesk_app;

-- No temporary objects but the owner's, no CREATE in public but the owner's.
-- +goose StatementBegin
DO $$ BEGIN
  EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;
-- +goose StatementEnd
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth, brokerdesk_operator, brokerdesk_app;

-- Least privilege for request work.
REVOKE ALL ON api_keys FROM brokerdesk_app;
REVOKE INSERT, UPDATE, DELETE ON users FROM brokerdesk_app;
-- The API never deletes these: event counters live as long as their company, submissions go
-- with their lead (foreign-key cascade, which runs as the table owner), stages have no DELETE in
-- the spec. (Contacts and phones keep DELETE: the spec deletes them. external_refs keeps it:
-- ExternalRefMixin clears a deleted record's references.)
REVOKE DELETE ON event_counters, lead_submissions, lead_stages FROM brokerdesk_app;

-- Later migrations that make brokerdesk_auth or brokerdesk_operator own a function wrap the
-- ALTER FUNCTION ... OWNER TO like this:
--   GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
--   ALTER FUNCTION public.f() OWNER TO brokerdesk_auth;
--   REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;

-- +goose Down
GRANT DELETE ON event_counters, lead_submissions, lead_stages TO brokerdesk_app;
GRANT INSERT, UPDATE, DELETE ON users TO brokerdesk_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON api_keys TO brokerdesk_app;
GRANT CREATE ON SCHEMA public TO brokerdesk_auth, brokerdesk_operator;
-- +goose StatementBegin
DO $$ BEGIN
  EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO PUBLIC', current_database());
END $$;
-- +goose StatementEnd
DROP FUNCTION public.maintenance_purge();
-- +goose StatementBegin
CREATE FUNCTION public.maintenance_purge(p_every interval, p_events_age interval)
RETURNS TABLE (ran boolean, events bigint, idempotency_keys bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  n_events bigint := 0;
  n_keys bigint := 0;
BEGIN
  INSERT INTO public.job_runs (id, last_run_at) VALUES ('purge', '-infinity') ON CONFLICT (id) DO NOTHING;
  UPDATE public.job_runs SET last_run_at = now() WHERE id = 'purge' AND last_run_at <= now() - p_every;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, 0::bigint, 0::bigint;
    RETURN;
  END IF;
  DELETE FROM public.events WHERE occurred_at < now() - p_events_age;
  GET DIAGNOSTICS n_events = ROW_COUNT;
  DELETE FROM public.idempotency_keys WHERE expires_at < now();
  GET DIAGNOSTICS n_keys = ROW_COUNT;
  RETURN QUERY SELECT true, n_events, n_keys;
END $$;
-- +goose StatementEnd
ALTER FUNCTION public.maintenance_purge(interval, interval) OWNER TO brokerdesk_operator;
REVOKE ALL ON FUNCTION public.maintenance_purge(interval, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.maintenance_purge(interval, interval) TO brokerdesk_app;
