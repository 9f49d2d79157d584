-- Hand-written: what GET /contacts needs to know before it builds its statement for a
-- credential that sees some owners only, in one round trip instead of two (issue 8, "Speed";
-- docs/decisions.md, "Search for restricted credentials"): the visible owners (the very
-- array the RLS policies use, app_visible_owner_ids()) and, for q and at most max_owners owners,
-- PostgreSQL's estimate of
-- the company's rows of those owners whose search text is LIKE pattern, which decides whether
-- contact_search_keys pays; with a pattern it also has the rest of the transaction plan
-- statements for their values (plan_cache_mode). Runs as the caller (not SECURITY DEFINER): the policies apply to
-- the estimate's statement as to any other, and the pattern travels as a parameter.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION contact_list_scope(pattern text, max_owners int) RETURNS TABLE (owner_id uuid, estimate float8)
LANGUAGE plpgsql VOLATILE -- EXPLAIN is allowed in volatile functions only
SET search_path = pg_catalog, pg_temp
SET jit = off -- a costly estimate (a common term) would JIT-compile the plan it only prints
AS $$
DECLARE
  owners uuid[] := public.app_visible_owner_ids();
  plan json;
BEGIN
  IF pattern IS NOT NULL THEN
    -- The list statement that follows is planned for its values, never from the plan cache:
    -- a generic plan cannot use the pg_trgm index for "search_text LIKE $n" (no pattern to
    -- take trigrams from) and walks or bitmaps every visible contact (q=berlin: 50 ms).
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

-- +goose Down
DROP FUNCTION contact_list_scope(text, int);
