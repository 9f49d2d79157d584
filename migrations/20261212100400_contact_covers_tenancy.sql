-- Hand-written (issue 24): what each contact's contracts cover, counted in the write that
-- changes a contract, for the cross-selling report (docs/decisions/reports.md "Cross-selling").
-- Computing every customer's gaps per request took 8 s at a million contracts before the first
-- page; with the counts kept here the first page is an index scan in score order.
--
-- One row per contact (contact_covers.id is the contact's id), created by a trigger on contacts
-- with the contact and deleted with it (composite foreign key). Triggers keep it:
--   - contacts: owner_id and type copied on every change (the row is visible as its contact is,
--     by the same owner policy, without a probe of the contact per row);
--   - contracts: covers counts the contact's contracts per type whose status holds cover
--     (active, suspended, offer, application), active_contracts its active ones; an insert adds,
--     a delete subtracts, an update of contact, type or status does both. Counting (not
--     recomputing from contracts) is what is right under concurrency: the row lock of the
--     UPDATE orders two writers of one contact, each adding its own contract, where a recount in
--     READ COMMITTED would miss the other's uncommitted one.
--   - contact_covers itself: score and gaps from cross_selling_gaps on every write.
-- The triggers run as the writer (no SECURITY DEFINER): row-level security applies to their
-- statements as to the write itself; a contract written for a contact whose row the writer
-- cannot update would lose its count silently, so that raises instead (no app path does it: a
-- contract's contact is visible to whoever writes the contract).
--
-- The rule table is cross_selling_rules; app/reports' gapRules is the same table for the API
-- (the gap filter's values, labels), and a test compares the two.

-- +goose Up
SELECT app_enable_tenant_rls('contact_covers');
ALTER TABLE contact_covers ADD CONSTRAINT tenant_contact_covers_contact
  FOREIGN KEY (company_id, id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
SELECT app_restrict_visibility('contact_covers', 'owner_visibility', 'app_visible_owner(owner_id)');
-- Rows go with their contact (the foreign key's cascade), never on their own.
REVOKE DELETE ON contact_covers FROM brokerdesk_app;

-- The report's order: score highest first, then contact id, as (rank, id) with rank = -score;
-- customers with a gap only. For the company, for each owner (a restricted credential reads
-- its owners' first rows), and for each gap (the gap filter: a rare gap would otherwise be
-- looked for among all customers in score order; one partial index per rule's gap, made below
-- once cross_selling_rules exists).
CREATE INDEX tenant_contact_covers_rank ON contact_covers (company_id, rank, id)
  WHERE active_contracts > 0 AND score > 0;
CREATE INDEX tenant_contact_covers_owner_rank ON contact_covers (company_id, owner_id, rank, id)
  WHERE active_contracts > 0 AND score > 0;

-- The basic covers a German broker checks for a private household and for a business: a
-- contact of contact_type lacks gap (weight) unless it holds a contract of one of covers. The
-- weights of one contact type add up to 100. A SQL function without SET clause, so PostgreSQL
-- inlines its VALUES into the statement that reads it (a function it cannot inline is planned
-- anew at every call: ~0.3 ms, in every write of a contract).
-- +goose StatementBegin
CREATE FUNCTION cross_selling_rules() RETURNS TABLE (contact_type text, gap text, weight int, covers text[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ VALUES
  ('private', '041', 30, ARRAY['040', '041']),
  ('private', '010', 20, ARRAY['010', '011', '012', '013', '014']),
  ('private', '130', 20, ARRAY['130', '131', '132']),
  ('private', '070', 15, ARRAY['070', '071', '079']),
  ('private', '030', 15, ARRAY['030', '031', '038', '039']),
  ('business', '042', 35, ARRAY['040', '042']),
  ('business', '080', 20, ARRAY['080', '081', '083', '089', '180', '181']),
  ('business', '230', 15, ARRAY['230', '231', '232', '233']),
  ('business', '070', 15, ARRAY['070', '071', '076', '079']),
  ('business', '044', 15, ARRAY['044'])
$$;
-- +goose StatementEnd

-- The gaps of a contact of ctype holding held (contract type -> count), heaviest first
-- ("041:30,130:20"), and their summed weight. plpgsql: its statement is planned once per
-- connection and kept.
-- +goose StatementBegin
CREATE FUNCTION cross_selling_gaps(ctype text, held jsonb, OUT gaps text, OUT score int)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  SELECT COALESCE(string_agg(r.gap || ':' || r.weight, ',' ORDER BY r.weight DESC, r.gap), ''),
      COALESCE(sum(r.weight), 0)::int
    INTO gaps, score
    FROM public.cross_selling_rules() r
    WHERE r.contact_type = ctype AND NOT (held ?| r.covers);
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contact_covers_score() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  SELECT g.gaps, g.score INTO NEW.gaps, NEW.score FROM public.cross_selling_gaps(NEW.contact_type, NEW.covers) g;
  NEW.rank := -NEW.score;
  RETURN NEW;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contact_covers_score BEFORE INSERT OR UPDATE ON contact_covers
  FOR EACH ROW EXECUTE FUNCTION contact_covers_score();

-- +goose StatementBegin
CREATE FUNCTION contact_covers_contact() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO public.contact_covers (id, company_id, owner_id, contact_type, covers, active_contracts, score, gaps, rank)
    VALUES (NEW.id, NEW.company_id, NEW.owner_id, NEW.type, '{}', 0, 0, '', 0);
  ELSIF NEW.owner_id IS DISTINCT FROM OLD.owner_id OR NEW.type IS DISTINCT FROM OLD.type THEN
    UPDATE public.contact_covers SET owner_id = NEW.owner_id, contact_type = NEW.type WHERE id = NEW.id;
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contact_covers_contact AFTER INSERT OR UPDATE OF owner_id, type ON contacts
  FOR EACH ROW EXECUTE FUNCTION contact_covers_contact();

-- contact_covers_count adds delta contracts of type ctype in status st to contact's counts
-- (nothing for a status that holds no cover). gone: the contact's row may be gone already (a
-- contract deleted with its contact).
-- +goose StatementBegin
CREATE FUNCTION contact_covers_count(contact uuid, ctype text, st text, delta int, gone boolean) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF st NOT IN ('active', 'suspended', 'offer', 'application') THEN
    RETURN;
  END IF;
  UPDATE public.contact_covers c SET
    covers = CASE WHEN COALESCE((c.covers ->> ctype)::int, 0) + delta > 0
      THEN jsonb_set(c.covers, ARRAY[ctype], to_jsonb(COALESCE((c.covers ->> ctype)::int, 0) + delta))
      ELSE c.covers - ctype END,
    active_contracts = c.active_contracts + CASE WHEN st = 'active' THEN delta ELSE 0 END
  WHERE c.id = contact;
  IF NOT FOUND AND NOT gone THEN
    RAISE EXCEPTION 'contact_covers: the row of contact % is not visible to this writer', contact
      USING ERRCODE = 'insufficient_privilege';
  END IF;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contact_covers_contract() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.contact_id = OLD.contact_id AND NEW.type = OLD.type AND NEW.status = OLD.status THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM public.contact_covers_count(OLD.contact_id, OLD.type, OLD.status::text, -1, TG_OP = 'DELETE');
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM public.contact_covers_count(NEW.contact_id, NEW.type, NEW.status::text, 1, false);
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER contact_covers_contract AFTER INSERT OR DELETE OR UPDATE OF contact_id, type, status ON contracts
  FOR EACH ROW EXECUTE FUNCTION contact_covers_contract();

-- One index per gap of the rule table (app/reports names the gap as a literal, so the planner
-- matches the index's predicate). gaps holds "code:weight" items: "041:" is found only as a code.
-- +goose StatementBegin
DO $$
DECLARE
  g text;
BEGIN
  FOR g IN SELECT DISTINCT r.gap FROM cross_selling_rules() r ORDER BY 1 LOOP
    EXECUTE format('CREATE INDEX %I ON contact_covers (company_id, rank, id) WHERE active_contracts > 0 AND gaps LIKE %L',
      'tenant_contact_covers_gap_' || g, '%' || g || ':%');
  END LOOP;
END $$;
-- +goose StatementEnd

GRANT EXECUTE ON FUNCTION cross_selling_rules(), cross_selling_gaps(text, jsonb), contact_covers_count(uuid, text, text, int, boolean)
  TO brokerdesk_app, brokerdesk_operator;

-- Every contact there is now, counted from its contracts (as the operator, whose policy admits
-- every company's rows; 20261127110000 says why).
SET LOCAL ROLE brokerdesk_operator;
INSERT INTO contact_covers (id, company_id, owner_id, contact_type, covers, active_contracts, score, gaps, rank)
SELECT p.id, p.company_id, p.owner_id, p.type, COALESCE(k.covers, '{}'), COALESCE(k.active, 0), 0, '', 0
FROM contacts p
LEFT JOIN (
  SELECT contact_id, jsonb_object_agg(type, n) FILTER (WHERE n > 0) AS covers, sum(active)::int AS active
  FROM (SELECT contact_id, type,
      count(*) FILTER (WHERE status IN ('active', 'suspended', 'offer', 'application')) AS n,
      count(*) FILTER (WHERE status = 'active') AS active
    FROM contracts GROUP BY contact_id, type) t
  GROUP BY contact_id
) k ON k.contact_id = p.id;
RESET ROLE;

-- +goose Down
DROP TRIGGER contact_covers_contract ON contracts;
DROP TRIGGER contact_covers_contact ON contacts;
DROP FUNCTION contact_covers_contract();
DROP FUNCTION contact_covers_count(uuid, text, text, int, boolean);
DROP FUNCTION contact_covers_contact();
DROP FUNCTION contact_covers_score();
DROP FUNCTION cross_selling_gaps(text, jsonb);
DROP FUNCTION cross_selling_rules();
GRANT DELETE ON contact_covers TO brokerdesk_app;
