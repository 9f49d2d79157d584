-- Hand-written: row-level security and tenant keys of contracts; the insurer catalog (not
-- company data: read by every company, written by the operator) with the insurers the GDV
-- sample files name, and the function an import uses to add a VU number it does not know.

-- +goose Up
SELECT app_enable_tenant_rls('contracts');

CREATE UNIQUE INDEX tenant_contracts_company_id_id ON contracts (company_id, id);
ALTER TABLE contracts ADD CONSTRAINT tenant_contracts_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE contracts ADD CONSTRAINT tenant_contracts_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
-- The catalog is global: a plain key (the tenant_ prefix marks hand-written constraints).
ALTER TABLE contracts ADD CONSTRAINT tenant_contracts_insurer
  FOREIGN KEY (insurer_id) REFERENCES insurers (id);

REVOKE ALL ON insurers FROM PUBLIC;
GRANT SELECT ON insurers TO brokerdesk_app;
GRANT SELECT, INSERT, UPDATE ON insurers TO brokerdesk_operator;

INSERT INTO insurers (id, vu_number, name, created_at) VALUES
  (gen_random_uuid(), '9999', 'XXX Versicherung AG (GDV-Musterdatei)', now()),
  (gen_random_uuid(), '1111', 'VU 1111', now()),
  (gen_random_uuid(), '1104', 'Stuttgarter Lebensversicherung a.G.', now()),
  (gen_random_uuid(), '1234', 'Testvers', now()),
  (gen_random_uuid(), '5015', 'NV-Versicherungen VVaG', now()),
  (gen_random_uuid(), '5501', 'HanseMerkur Allgemeine Versicherung AG', now()),
  (gen_random_uuid(), '4711', 'Musterabsender', now())
ON CONFLICT (vu_number) DO NOTHING;

-- An import meets a VU number the catalog lacks: it adds the number with the placeholder name
-- "VU <number>" (never a name from the file: the catalog is shared by every company, the
-- operator names the entry). Returns the insurer's id either way.
-- +goose StatementBegin
CREATE FUNCTION insurer_ensure(p_vu_number text) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  v_id uuid;
BEGIN
  IF p_vu_number IS NULL OR p_vu_number !~ '^[0-9A-Za-z]{1,5}$' THEN
    RAISE EXCEPTION 'invalid VU number' USING ERRCODE = '22023';
  END IF;
  SELECT id INTO v_id FROM public.insurers WHERE vu_number = p_vu_number;
  IF v_id IS NOT NULL THEN
    RETURN v_id;
  END IF;
  INSERT INTO public.insurers (id, vu_number, name, created_at)
  VALUES (pg_catalog.gen_random_uuid(), p_vu_number, 'VU ' || p_vu_number, pg_catalog.now())
  ON CONFLICT (vu_number) DO NOTHING;
  SELECT id INTO v_id FROM public.insurers WHERE vu_number = p_vu_number;
  RETURN v_id;
END $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION insurer_ensure(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION insurer_ensure(text) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION insurer_ensure(text);
ALTER TABLE contracts DROP CONSTRAINT tenant_contracts_insurer;
ALTER TABLE contracts DROP CONSTRAINT tenant_contracts_owner;
ALTER TABLE contracts DROP CONSTRAINT tenant_contracts_contact;
DROP INDEX tenant_contracts_company_id_id;
