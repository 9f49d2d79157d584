-- Hand-written: indexes for the renewals report at a million contracts (issue 24, "Numbers";
-- app/reports/renewals_sql.go, docs/decisions/reports.md "Renewals"). The report computed the
-- due day of every contract of the company and sorted them for one page (1.2 s for an admin,
-- 5.8 s for an agent at 1,000,000 contracts). A page is now read in (due day, id) order from:
--   tenant_contracts_renewal_day (company, month*100+day of the main renewal date, id): the
--     anniversaries in a window, one month-day range per calendar year;
--   tenant_contracts_end_date (company, end date, id): the end dates in a window;
--   tenant_contracts_renewal_date (company, main renewal date, id): a window longer than a
--     year past anniversaries' first year, where only stored dates later than its start fall.
-- Both are partial on what the report lists (no offers or applications, the date set).
--
-- contract_renewal_day(date) is the month-day (228 for 28 February). Under the row-level
-- security policies a condition is an index condition only when all its functions are
-- LEAKPROOF (else it runs after the per-row policies, over every row of the company); EXTRACT
-- and numeric casts are not, so the month-day is this function's. It cannot fail for any date
-- (NULL for NULL, 'infinity' gives NULL), so LEAKPROOF is true of it; plpgsql, so it is never
-- inlined into the EXTRACTs again. LEAKPROOF needs a superuser: without one the function is
-- created without it, and the report stays correct but scans the company's contracts of the
-- window's month-days after the policies (slow at a million, as before this migration).

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    CREATE FUNCTION public.contract_renewal_day(d date) RETURNS integer
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF
      AS 'BEGIN RETURN EXTRACT(MONTH FROM d)::integer * 100 + EXTRACT(DAY FROM d)::integer; END';
  ELSE
    RAISE WARNING 'not a superuser: contract_renewal_day is not LEAKPROOF; the renewals report scans instead of reading its month-day ranges';
    CREATE FUNCTION public.contract_renewal_day(d date) RETURNS integer
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS 'BEGIN RETURN EXTRACT(MONTH FROM d)::integer * 100 + EXTRACT(DAY FROM d)::integer; END';
  END IF;
END $$;
-- +goose StatementEnd
CREATE INDEX tenant_contracts_renewal_day ON public.contracts (company_id, public.contract_renewal_day(main_renewal_date), id)
  WHERE status NOT IN ('offer', 'application') AND main_renewal_date IS NOT NULL;
CREATE INDEX tenant_contracts_end_date ON public.contracts (company_id, end_date, id)
  WHERE status NOT IN ('offer', 'application') AND end_date IS NOT NULL;
CREATE INDEX tenant_contracts_renewal_date ON public.contracts (company_id, main_renewal_date, id)
  WHERE status NOT IN ('offer', 'application') AND main_renewal_date IS NOT NULL;

-- +goose Down
DROP INDEX public.tenant_contracts_renewal_date;
DROP INDEX public.tenant_contracts_end_date;
DROP INDEX public.tenant_contracts_renewal_day;
DROP FUNCTION public.contract_renewal_day(date);
