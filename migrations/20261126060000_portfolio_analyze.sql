-- Statistics for the tables a portfolio commit grows (docs/benchmarks.md, "Portfolio commit
-- flat"). Without statistics (a table never analysed: a new database, or autovacuum not yet
-- run, or off) the planner estimates every company's slice of contacts, contracts and
-- external_refs at about one row, so all indexes that start with company_id cost the same and it
-- may pick one that matches only company_id: the lookups of a commit batch and the foreign-key
-- check contracts → contacts then read all of the company's rows, and the commit slows as the
-- tables grow. Plans cached in pooled connections keep such a choice until an ANALYZE
-- invalidates them. The commit calls this when its transfer has doubled since the last call.
--
-- SECURITY DEFINER, owned by the tables' owner: only the owner may ANALYZE (PostgreSQL 15).
-- No parameters: it analyses these three tables and nothing else; pg_stats hides their
-- statistics from roles under row-level security.

-- +goose Up
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

-- +goose Down
DROP FUNCTION portfolio_analyze();
