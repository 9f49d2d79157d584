-- Hand-written: q for a credential that sees only some owners' contacts (issue 8, "Speed":
-- visibility may cost at most 20% over the admin's query). The pg_trgm index finds a term's
-- matches in the whole company; an agent sees 1 in 20 of them, so its plan ANDs that bitmap
-- (q=müll: 15,631 rows at 1,000,000 contacts) with the owners' bitmap (50,259 rows) and reads
-- 781 rows: 9–12 ms against the admin's 2 ms, which walks created_at and stops at 51 matches.
--
-- contact_search_keys(owner, text) holds every three-character window of the search text
-- prefixed by the last 8 hex digits of the owner (17 µs a row; a set-based SQL version took 65): a GIN index over it finds "owner X's contacts
-- containing ü-l-l" from a posting list of that owner's matches alone. app/contacts asks for
-- each visible owner the windows of the term (a BitmapOr, ~80 entries per owner for müll) and
-- keeps strpos(search_text, term) as the exact test, and takes this path only when PostgreSQL
-- estimates few visible matches (docs/decisions.md, "Search for restricted credentials").
-- Windows across the newline between fields are left out (a term never holds a newline that
-- matters: app/contacts sends only windows without one). Eight hex digits of a random UUID
-- part may collide between two owners: then the index returns a few more candidates, which
-- the owner and strpos conditions drop. Not a security boundary: RLS and the owner filter are.
--
-- LEAKPROOF so that PostgreSQL may use the condition as an index condition under the
-- visibility policies (see 20261125030100): the function raises no error for any input (its
-- pattern is a constant), and neither does arraycontains (text[] @> text[]). COST 1000 keeps
-- the planner from plans that would compute it row by row. Marking either needs a superuser; without one
-- the function stays non-leakproof and app/contacts never sends it (it checks proleakproof).
-- No statistics for the expression (target 0): the path is chosen on the LIKE estimate, and
-- ANALYZE would compute the keys of every sampled row.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION contact_search_keys(owner uuid, t text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  frame text := E'\n' || right(owner::text, 8) || E'\\1\n';
BEGIN
  -- Each pass cuts t, from the first, second or third character on, into consecutive
  -- three-character chunks and frames each as newline, owner, chunk, newline; splitting at the
  -- newlines leaves every window that holds no newline as owner + window (11 characters), the
  -- windows of all three passes together, besides shorter pieces (chunks cut at a newline of
  -- t, the rest of fewer than three characters), which no query asks for. GIN ignores repeats.
  RETURN array_remove(string_to_array(regexp_replace(t, '(...)', frame, 'g'), E'\n')
      || string_to_array(regexp_replace(substr(t, 2), '(...)', frame, 'g'), E'\n')
      || string_to_array(regexp_replace(substr(t, 3), '(...)', frame, 'g'), E'\n'), '');
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
DO $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION contact_search_keys(uuid, text) LEAKPROOF;
    ALTER FUNCTION pg_catalog.arraycontains(anyarray, anyarray) LEAKPROOF;
  ELSE
    RAISE WARNING 'not a superuser: contact_search_keys stays non-leakproof; restricted contact search keeps the pg_trgm plan';
  END IF;
END $$;
-- +goose StatementEnd
CREATE INDEX tenant_contacts_search_keys ON contacts USING gin (contact_search_keys(owner_id, search_text));
ALTER INDEX tenant_contacts_search_keys ALTER COLUMN 1 SET STATISTICS 0;

-- +goose Down
DROP INDEX tenant_contacts_search_keys;
DROP FUNCTION contact_search_keys(uuid, text);
