-- Hand-written: what GET /search (issue 24, app/search) matches on, as functions of the row the
-- indexes and the queries share (docs/decisions/search.md).
--
-- search_fold is the one folding of both sides, the stored text and the query: trimmed and
-- lower-cased as contact_fold (C.UTF-8), then the German umlauts written out (ä ae, ö oe, ü ue,
-- ß ss: so "Müller", "Mueller" and "mueller@…" share "mueller"), then unaccent for every other
-- accent (é e, ł l). Writing umlauts out rather than dropping them (unaccent alone: ü u) is the
-- German convention of names and e-mail addresses: Müller writes mueller@, not muller@.
-- unaccent(regdictionary, text) is only STABLE (its rules file could change), so an index
-- expression needs this IMMUTABLE wrapper; the dictionary is named by schema, resolved once when
-- the function is created (SQL-standard body), so no search_path decides it. unaccent is a
-- trusted extension since PostgreSQL 13: a database owner that is no superuser may create it.
--
-- LEAKPROOF (as textlike, 20261125030100) so that "search_fold(x) LIKE pattern" may be an index
-- condition under the visibility policies: none of these functions raises an error for any text
-- (their regular expressions and dictionary are constants). Marking needs a superuser; without
-- one they stay non-leakproof and the search is correct, only without its indexes.
--
-- The full text of documents (search_document_tsv) is the 'german' configuration over the text
-- with accents removed (search_unaccent: ü u, as the German stemmer itself reads umlauts, so
-- "Schäden" and "Schaden" share the stem "schad"), not over search_fold: written-out umlauts
-- would split them ("schaed", "schad"). The query side asks for the query as typed and with
-- written-out umlauts read back ("Mueller" as "Muller", app/search). Its @@ is not leakproof (a catalog operator we do not mark): under the policies
-- PostgreSQL scans the company's documents by company_id and tests the vector after; the GIN
-- index serves operator sessions and is ready for a leakproof operator of our own.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS unaccent WITH SCHEMA public;

-- +goose StatementBegin
CREATE FUNCTION search_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN public.unaccent('public.unaccent'::regdictionary,
  pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
    public.contact_fold(t), 'ä', 'ae'), 'ö', 'oe'), 'ü', 'ue'), 'ß', 'ss'));
-- +goose StatementEnd

-- A lead's searchable text: name, e-mail, phone, one per line (a term never spans two).
-- +goose StatementBegin
CREATE FUNCTION search_lead_text(first text, last text, email text, phone text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN public.search_fold(pg_catalog.concat_ws(E'\n', pg_catalog.concat_ws(' ', first, last), email, phone));
-- +goose StatementEnd

-- A policy number as its key: letters and digits only, lower case ("AB-123 45/6" -> "ab123456"),
-- so a number typed with or without spaces, dashes, dots or slashes finds its contract.
-- +goose StatementBegin
CREATE FUNCTION search_policy_key(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN public.contact_fold(pg_catalog.regexp_replace(t, '[^[:alnum:]]+', '', 'g'));
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION search_unaccent(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN public.unaccent('public.unaccent'::regdictionary, t);
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION search_document_tsv(t text) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.to_tsvector('pg_catalog.german'::regconfig, public.search_unaccent(t));
-- +goose StatementEnd

-- +goose StatementBegin
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION search_fold(text) LEAKPROOF;
    ALTER FUNCTION search_lead_text(text, text, text, text) LEAKPROOF;
    ALTER FUNCTION search_policy_key(text) LEAKPROOF;
    ALTER FUNCTION search_unaccent(text) LEAKPROOF;
  ELSE
    RAISE WARNING 'not a superuser: search_fold, search_lead_text, search_policy_key, search_unaccent stay non-leakproof; GET /search will not use its indexes under row-level security';
  END IF;
END $$;
-- +goose StatementEnd

CREATE INDEX tenant_contacts_search_fold ON contacts USING gin (search_fold(search_text) gin_trgm_ops);
CREATE INDEX tenant_leads_search ON leads USING gin (search_lead_text(first_name, last_name, email, phone) gin_trgm_ops);
CREATE INDEX tenant_contracts_policy_key ON contracts USING gin (search_policy_key(policy_number) gin_trgm_ops);
CREATE INDEX tenant_documents_filename ON documents USING gin (search_fold(filename) gin_trgm_ops);
CREATE INDEX tenant_documents_text ON documents USING gin (search_document_tsv(text));

-- +goose Down
DROP INDEX tenant_documents_text;
DROP INDEX tenant_documents_filename;
DROP INDEX tenant_contracts_policy_key;
DROP INDEX tenant_leads_search;
DROP INDEX tenant_contacts_search_fold;
DROP FUNCTION search_document_tsv(text);
DROP FUNCTION search_unaccent(text);
DROP FUNCTION search_policy_key(text);
DROP FUNCTION search_lead_text(text, text, text, text);
DROP FUNCTION search_fold(text);
-- unaccent stays: another object may use it by then, and keeping an extension costs nothing.
