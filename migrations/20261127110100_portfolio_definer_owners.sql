-- Hand-written: the two SECURITY DEFINER functions of the portfolio import get owners that are
-- no superuser, and portfolio_analyze a rate limit (issue 20, item 10). Created by the migrating
-- role, both ran with its rights, a superuser's where a superuser migrates (the tests, `brokerdesk
-- dev`): a flaw in either would have been a superuser's.
--
-- insurer_ensure adds "VU <n>" to the platform catalog: brokerdesk_operator, which writes the
-- catalog (SELECT, INSERT, UPDATE on insurers, no policy there), owns it now.
--
-- portfolio_analyze runs ANALYZE, which PostgreSQL 15 and 16 allow only a table's owner, the
-- database's owner or a superuser (17 adds the MAINTAIN privilege). So the three tables it
-- analyses get an owner of their own, brokerdesk_maintainer (NOLOGIN, no superuser, no
-- BYPASSRLS; migrations.EnsureRoles creates it and lets the migrating role act as it), which
-- owns the function too. Running as that role, the function can reach those three tables and
-- job_runs, nothing else; FORCE ROW LEVEL SECURITY holds for it like for every owner. A role
-- that belongs to it owns tables, which tenancy.CheckRole refuses for the server's role.
--
-- Rate limit: at most one ANALYZE every 30 seconds, whoever calls (job_runs, as
-- maintenance_purge does). ANALYZE works on whole tables, so a limit per company would not
-- bound the load: the app role calling it in a loop analysed the three tables back to back (at
-- a million contacts each run samples 300,000 rows of search_text, statistics target 1000). A
-- commit calls it when its transfer's count doubles (500, 1,000, 2,000 …); the first call of a
-- transfer is what matters (no statistics: the planner takes a company's rows for one), the
-- later ones refine, and a skipped one is taken at the next doubling after the 30 seconds.
-- SKIP LOCKED: a caller that finds another ANALYZE running returns at once instead of waiting
-- for it. Returns whether it analysed.

-- +goose Up
GRANT CREATE ON SCHEMA public TO brokerdesk_operator;
ALTER FUNCTION public.insurer_ensure(text) OWNER TO brokerdesk_operator;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_operator;

DROP FUNCTION public.portfolio_analyze();
-- +goose StatementBegin
CREATE FUNCTION public.portfolio_analyze() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO public.job_runs (id, last_run_at) VALUES ('portfolio_analyze', '-infinity') ON CONFLICT (id) DO NOTHING;
  PERFORM FROM public.job_runs WHERE id = 'portfolio_analyze' AND last_run_at <= now() - interval '30 seconds'
    FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE public.job_runs SET last_run_at = now() WHERE id = 'portfolio_analyze';
  ANALYZE public.contacts, public.contracts, public.external_refs;
  RETURN true;
END $$;
-- +goose StatementEnd
GRANT SELECT, INSERT, UPDATE ON job_runs TO brokerdesk_maintainer;
GRANT CREATE ON SCHEMA public TO brokerdesk_maintainer;
ALTER TABLE public.contacts OWNER TO brokerdesk_maintainer;
ALTER TABLE public.contracts OWNER TO brokerdesk_maintainer;
ALTER TABLE public.external_refs OWNER TO brokerdesk_maintainer;
ALTER FUNCTION public.portfolio_analyze() OWNER TO brokerdesk_maintainer;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_maintainer;
REVOKE ALL ON FUNCTION public.portfolio_analyze() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.portfolio_analyze() TO brokerdesk_app;

-- +goose Down
ALTER TABLE public.contacts OWNER TO CURRENT_USER;
ALTER TABLE public.contracts OWNER TO CURRENT_USER;
ALTER TABLE public.external_refs OWNER TO CURRENT_USER;
REVOKE SELECT, INSERT, UPDATE ON job_runs FROM brokerdesk_maintainer;
DROP FUNCTION public.portfolio_analyze();
-- +goose StatementBegin
CREATE FUNCTION portfolio_analyze() RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  ANALYZE public.contacts, public.contracts, public.external_refs;
END $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION portfolio_analyze() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION portfolio_analyze() TO brokerdesk_app;
ALTER FUNCTION public.insurer_ensure(text) OWNER TO CURRENT_USER;
DELETE FROM job_runs WHERE id = 'portfolio_analyze';
