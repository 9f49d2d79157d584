-- Hand-written: GET /search at a million rows (issue 24, "Numbers"; docs/decisions/search.md
-- "Indexes and visibility"). Under the visibility policies a condition can only be an index
-- condition when every function in it is leakproof; three of the search's were not:
--
-- search_policy_key is LEAKPROOF, but PostgreSQL inlines a SQL function before it asks, and the
-- inlined regexp_replace and lower are not: the contracts' key was tested on every contract (a
-- sequential scan of all of them for every query, 2-3 s at 1,000,000). A function with a SET
-- clause is never inlined, so it gets one (its body names every object by schema: the path
-- changes nothing). The index expression is read through the same rule, so both stay the call.
--
-- The documents' text: search_document_tsv is inlined into to_tsvector and unaccent, and @@ is a
-- catalog operator we do not mark. search_document_tsv gets the same SET clause and LEAKPROOF
-- (to_tsvector raises an error only for a text over 1 MB, which app/documents never stores: it
-- cuts the text at 100,000 bytes), and public.@@> (tsvector, tsquery) is @@ as our own operator:
-- LANGUAGE internal 'ts_match_vq', the same C function (nothing computes differently), LEAKPROOF
-- (it raises no error for any vector and query). A GIN index serves only its operator class's
-- operators, so search_tsvector_ops is tsvector_ops' support functions with @@> as strategy 1,
-- and tenant_documents_text is rebuilt with it (the built-in @@ no longer uses it: only the
-- search reads it). Estimated by tsmatchsel as @@ (it does not check which operator asks).
--
-- The exact matches a bounded search must always keep (app/search reads at most 100 matches a
-- branch, plus the first exact ones): the folded title of a contact and of a lead as
-- functions (search_contact_title, search_lead_title: what app/search compares with the folded
-- query) with a btree index each, and one on the policy key (pg_trgm's equality through
-- tenant_contracts_policy_key reads the long posting lists of common trigrams such as "000":
-- 15-20 ms for one number at a million contracts, against 0.1 ms). Same e-mail: the existing
-- email_key indexes; same filename: pg_trgm's equality (20,000 documents).
--
-- The three btree indexes and the rebuilt GIN index took 50 s together on the seeded database
-- (1,000,000 contacts and contracts, 100,000 leads, 20,000 documents); writes to these tables
-- wait meanwhile.
--
-- LANGUAGE internal, LEAKPROOF and CREATE OPERATOR CLASS need a superuser: without one
-- search_policy_key's SET clause, the title functions and the btree indexes are still made,
-- nothing is marked, and app/search keeps its unbounded statement with @@ (it asks once per
-- service whether @@> and the title functions exist and are leakproof): correct, without the
-- indexes under the policies.

-- +goose Up
ALTER FUNCTION search_policy_key(text) SET search_path = pg_catalog, public;

-- +goose StatementBegin
CREATE FUNCTION search_contact_title(typ text, first text, last text, company text, email text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, public
RETURN public.search_fold(COALESCE(NULLIF(pg_catalog.btrim(CASE WHEN typ = 'business' THEN company
  ELSE pg_catalog.concat_ws(' ', first, last) END), ''), email, ''));
-- +goose StatementEnd
COMMENT ON FUNCTION search_contact_title(text, text, text, text, text) IS 'a contact''s title in a search hit (app/search contactTitle), folded by search_fold';

-- +goose StatementBegin
CREATE FUNCTION search_lead_title(first text, last text, email text, phone text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, public
RETURN public.search_fold(COALESCE(NULLIF(pg_catalog.btrim(pg_catalog.concat_ws(' ', first, last)), ''), email, phone, ''));
-- +goose StatementEnd
COMMENT ON FUNCTION search_lead_title(text, text, text, text) IS 'a lead''s title in a search hit (app/search leadsBranch), folded by search_fold';

CREATE INDEX tenant_contacts_title_fold ON contacts (company_id, search_contact_title(type, first_name, last_name, company_name, email));
CREATE INDEX tenant_leads_title_fold ON leads (company_id, search_lead_title(first_name, last_name, email, phone));
CREATE INDEX tenant_contracts_policy_key_exact ON contracts (company_id, search_policy_key(policy_number));

-- +goose StatementBegin
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    RAISE WARNING 'not a superuser: no leakproof @@> and title functions; GET /search keeps its unbounded statement without indexes under row-level security';
    RETURN;
  END IF;
  ALTER FUNCTION public.search_contact_title(text, text, text, text, text) LEAKPROOF;
  ALTER FUNCTION public.search_lead_title(text, text, text, text) LEAKPROOF;
  ALTER FUNCTION public.search_document_tsv(text) SET search_path = pg_catalog, public;
  ALTER FUNCTION public.search_document_tsv(text) LEAKPROOF;
  CREATE FUNCTION public.tsvector_matches(tsvector, tsquery) RETURNS boolean
    LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'ts_match_vq';
  CREATE OPERATOR public.@@> (LEFTARG = tsvector, RIGHTARG = tsquery, FUNCTION = public.tsvector_matches,
    RESTRICT = tsmatchsel, JOIN = tsmatchjoinsel);
  CREATE OPERATOR CLASS public.search_tsvector_ops FOR TYPE tsvector USING gin AS
    OPERATOR 1 public.@@> (tsvector, tsquery),
    FUNCTION 1 pg_catalog.gin_cmp_tslexeme(text, text),
    FUNCTION 2 pg_catalog.gin_extract_tsvector(tsvector, internal, internal),
    FUNCTION 3 pg_catalog.gin_extract_tsquery(tsvector, internal, int2, internal, internal, internal, internal),
    FUNCTION 4 pg_catalog.gin_tsquery_consistent(internal, int2, tsvector, int4, internal, internal, internal, internal),
    FUNCTION 5 pg_catalog.gin_cmp_prefix(text, text, int2, internal),
    FUNCTION 6 pg_catalog.gin_tsquery_triconsistent(internal, int2, tsvector, int4, internal, internal, internal),
    STORAGE text;
  DROP INDEX public.tenant_documents_text;
  CREATE INDEX tenant_documents_text ON public.documents USING gin (public.search_document_tsv(text) public.search_tsvector_ops);
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
  IF to_regoperator('public.@@>(tsvector, tsquery)') IS NOT NULL THEN
    DROP INDEX public.tenant_documents_text;
    CREATE INDEX tenant_documents_text ON public.documents USING gin (public.search_document_tsv(text));
    DROP OPERATOR FAMILY public.search_tsvector_ops USING gin; -- and its class
    DROP OPERATOR public.@@> (tsvector, tsquery);
    DROP FUNCTION public.tsvector_matches(tsvector, tsquery);
    ALTER FUNCTION public.search_document_tsv(text) NOT LEAKPROOF;
    ALTER FUNCTION public.search_document_tsv(text) RESET search_path;
  END IF;
END $$;
-- +goose StatementEnd
DROP INDEX tenant_contracts_policy_key_exact;
DROP INDEX tenant_leads_title_fold;
DROP INDEX tenant_contacts_title_fold;
DROP FUNCTION search_lead_title(text, text, text, text);
DROP FUNCTION search_contact_title(text, text, text, text, text);
ALTER FUNCTION search_policy_key(text) RESET search_path;
