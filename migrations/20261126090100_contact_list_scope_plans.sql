-- Hand-written: contact_list_scope costs a restricted credential's q less (issue 8, "Speed").
--
-- 1. It no longer sets plan_cache_mode for the rest of the transaction (20261126080000 did, so
--    that the list statement after it was planned for its values). That made every later
--    statement of the request plan anew as well: the phones of the page cost 0.5-0.8 ms of
--    planning instead of a cached plan. The list statement itself now goes out as an unnamed
--    statement, which PostgreSQL plans for its values every time (tenancy.CustomPlans).
-- 2. Its estimate reads a coarse statistic of its own. Estimating "search_text LIKE '%müll%'"
--    means matching the pattern against every entry of the column's histogram: 1,001 entries
--    since 20261126010000 (the admin's plan needs them), 0.33 ms of the estimate's 0.5 ms of
--    planning. The estimate only has to tell a few hundred visible matches from many thousand
--    (keysMaxRows, 1,000), so it asks about the expression search_text || '' (the same text),
--    whose extended statistics keep 101 entries: 0.2 ms of planning. At 1,000,000 contacts
--    q=müll (781 visible matches for the benchmark's agent) was estimated at 266 rows and
--    q=berlin (one in eight of its 50,259 contacts, ~6,300) at 1,595: the same decisions as
--    with the column's statistics.

-- +goose Up
CREATE STATISTICS contacts_search_estimate ON (search_text || '') FROM contacts;
ALTER STATISTICS contacts_search_estimate SET STATISTICS 100;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_list_scope(pattern text, max_owners int) RETURNS TABLE (owner_id uuid, estimate float8)
LANGUAGE plpgsql VOLATILE -- EXPLAIN is allowed in volatile functions only
SET search_path = pg_catalog, pg_temp
SET jit = off -- a costly estimate (a common term) would JIT-compile the plan it only prints
AS $$
DECLARE
  owners uuid[] := public.app_visible_owner_ids();
  plan json;
BEGIN
  IF pattern IS NOT NULL AND cardinality(owners) BETWEEN 1 AND max_owners THEN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM public.contacts
      WHERE company_id = $1 AND owner_id = ANY($2) AND (search_text || '''') LIKE $3'
      INTO plan USING public.app_current_company(), owners, pattern;
    estimate := (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
  END IF;
  RETURN QUERY SELECT o, estimate FROM unnest(owners) AS o;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP STATISTICS contacts_search_estimate;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_list_scope(pattern text, max_owners int) RETURNS TABLE (owner_id uuid, estimate float8)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
  owners uuid[] := public.app_visible_owner_ids();
  plan json;
BEGIN
  IF pattern IS NOT NULL THEN
    PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);
  END IF;
  IF pattern IS NOT NULL AND cardinality(owners) BETWEEN 1 AND max_owners THEN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM public.contacts
      WHERE company_id = $1 AND owner_id = ANY($2) AND search_text LIKE $3'
      INTO plan USING public.app_current_company(), owners, pattern;
    estimate := (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
  END IF;
  RETURN QUERY SELECT o, estimate FROM unnest(owners) AS o;
END $$;
-- +goose StatementEnd
