-- Hand-written: the columns contact search and sorting key on are derived from the row in ONE
-- place, this trigger (issue 20, item C). search_text (q: names, company name, e-mail, street,
-- city, profession, tags, lower case, one per line; its pg_trgm index and, through
-- contact_search_keys(owner_id, search_text), the restricted credentials' index), sort_name
-- (sort=name) and email_key (?email=, duplicate matching) were computed in app/contacts and set
-- by its writes only: the portfolio import created its contacts through ent without them, so
-- GET /contacts?q=<name> found none of a broker's imported customers and sort=name put them
-- first. Every write now gets them from the row itself, whatever path it takes (API, bulk,
-- external upsert, lead conversion, portfolio import, raw SQL of imports to come); a value a
-- writer sends for them is replaced.
--
-- Folding must equal what app/contacts does to a query term (strings.TrimSpace, then
-- strings.ToLower: Unicode simple case mapping): lower() under a libc C.UTF-8 collation is
-- that, character for character (checked for every letter of Unicode by
-- TestContacts_SearchFoldMatchesGo); PostgreSQL 17's builtin pg_c_utf8 is the same mapping
-- without the operating system. The collation is pinned, not the database's default: under
-- locale C, lower() leaves umlauts alone and "MÜLLER" would be stored as "mÜller". ICU
-- (und-x-icu) is the fallback: it differs in one letter (İ becomes i + U+0307).
-- btrim's set is Go's unicode.IsSpace (White_Space), so a name of only spaces adds no line.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION contact_trim(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN pg_catalog.btrim(t, E' \t\n\u000B\f\r\u0085\u00A0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u2028\u2029\u202F\u205F\u3000');
-- +goose StatementEnd
-- +goose StatementBegin
DO $$
DECLARE
  coll text;
BEGIN
  SELECT c.collname INTO coll FROM pg_catalog.pg_collation c
  WHERE c.collname IN ('pg_c_utf8', 'C.utf8', 'C.UTF-8')
    AND c.collencoding IN (-1, pg_catalog.pg_char_to_encoding('UTF8'))
  ORDER BY c.collname = 'pg_c_utf8' DESC, c.collname LIMIT 1;
  IF coll IS NULL AND EXISTS (SELECT FROM pg_catalog.pg_collation WHERE collname = 'und-x-icu') THEN
    coll := 'und-x-icu';
  END IF;
  IF coll IS NULL THEN
    RAISE WARNING 'no C.UTF-8 or ICU collation: contact search folds case with the database default collation';
    coll := 'default';
  END IF;
  EXECUTE pg_catalog.format($f$
    CREATE FUNCTION public.contact_fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN pg_catalog.lower(public.contact_trim(t) COLLATE %I)$f$, coll);
END $$;
-- +goose StatementEnd
COMMENT ON FUNCTION contact_fold(text) IS 'trim and lower-case as app/contacts folds a query term (Go strings.TrimSpace, strings.ToLower)';

-- search_text: each non-empty part folded, followed by a newline (contact_search_keys leaves
-- out the windows across a newline). Only string values of the groups count, as in the API's
-- documents; the sensitive groups are sealed in another column and never searched.
-- +goose StatementBegin
CREATE FUNCTION contact_search_text(first text, last text, company text, email text, groups jsonb, tags jsonb)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
  SELECT COALESCE(pg_catalog.string_agg(public.contact_fold(u.p) || E'\n', '' ORDER BY u.o), '')
  FROM pg_catalog.unnest(ARRAY[first, last, company, email,
           CASE WHEN pg_catalog.jsonb_typeof(groups -> 'address' -> 'street') = 'string' THEN groups -> 'address' ->> 'street' END,
           CASE WHEN pg_catalog.jsonb_typeof(groups -> 'address' -> 'city') = 'string' THEN groups -> 'address' ->> 'city' END,
           CASE WHEN pg_catalog.jsonb_typeof(groups -> 'profession' -> 'profession') = 'string' THEN groups -> 'profession' ->> 'profession' END]
         || ARRAY(SELECT pg_catalog.jsonb_array_elements_text(CASE WHEN pg_catalog.jsonb_typeof(tags) = 'array' THEN tags ELSE '[]' END)))
       WITH ORDINALITY AS u(p, o)
  WHERE public.contact_fold(u.p) <> '';
END;
-- +goose StatementEnd

-- sort_name: a business by its company name, a person as "last first".
-- +goose StatementBegin
CREATE FUNCTION contact_sort_name(typ text, first text, last text, company text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN typ = 'business' THEN COALESCE(public.contact_fold(company), '')
            ELSE COALESCE(public.contact_fold(public.contact_trim(last) || ' ' || public.contact_trim(first)), '') END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contacts_search_columns() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  NEW.search_text := public.contact_search_text(NEW.first_name, NEW.last_name, NEW.company_name, NEW.email, NEW.groups, NEW.tags);
  NEW.sort_name := public.contact_sort_name(NEW.type, NEW.first_name, NEW.last_name, NEW.company_name);
  NEW.email_key := public.contact_fold(NEW.email);
  RETURN NEW;
END $$;
-- +goose StatementEnd
-- The derived columns are in the list too: a write that sets them directly gets them
-- recomputed (nobody stores a search text the row does not say).
CREATE TRIGGER contacts_search_columns BEFORE INSERT OR UPDATE OF
  type, first_name, last_name, company_name, email, groups, tags, search_text, sort_name, email_key
  ON contacts FOR EACH ROW EXECUTE FUNCTION contacts_search_columns();

-- The rows written without them (portfolio imports) and any other that differs. As the operator
-- role, whose policy admits every company's rows: a migrating owner that is no superuser is
-- under FORCE ROW LEVEL SECURITY and would update nothing.
SET LOCAL ROLE brokerdesk_operator;
UPDATE contacts SET
  search_text = contact_search_text(first_name, last_name, company_name, email, groups, tags),
  sort_name = contact_sort_name(type, first_name, last_name, company_name),
  email_key = contact_fold(email)
WHERE (search_text, sort_name, email_key) IS DISTINCT FROM
  (contact_search_text(first_name, last_name, company_name, email, groups, tags),
   contact_sort_name(type, first_name, last_name, company_name), contact_fold(email));
RESET ROLE;

-- +goose Down
DROP TRIGGER contacts_search_columns ON contacts;
DROP FUNCTION contacts_search_columns();
DROP FUNCTION contact_sort_name(text, text, text, text);
DROP FUNCTION contact_search_text(text, text, text, text, jsonb, jsonb);
DROP FUNCTION contact_fold(text);
DROP FUNCTION contact_trim(text);
