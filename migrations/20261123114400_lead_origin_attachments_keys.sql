-- Hand-written: which leads came through the intake (the intake merges only into those), and
-- attachments that outlive their lead once a conversion gave them to a contact.

-- +goose Up
-- Leads an intake submission created are intake leads; the rest keep the column's default api
-- (leads of external upserts included: nothing told them apart before).
SET LOCAL ROLE brokerdesk_operator;
UPDATE leads l SET origin = 'intake'
WHERE EXISTS (SELECT 1 FROM lead_submissions s
              WHERE s.company_id = l.company_id AND s.lead_id = l.id AND s.outcome = 'created');
RESET ROLE;

-- An attachment belongs to its lead until a conversion gives it to a contact (contact_id). Then
-- deleting the lead only clears lead_id; deleting the contact deletes it. Never neither.
ALTER TABLE lead_attachments DROP CONSTRAINT tenant_lead_attachments_lead;
ALTER TABLE lead_attachments ADD CONSTRAINT tenant_lead_attachments_lead
  FOREIGN KEY (company_id, lead_id) REFERENCES leads (company_id, id) ON DELETE SET NULL (lead_id);
ALTER TABLE lead_attachments ADD CONSTRAINT tenant_lead_attachments_held
  CHECK (lead_id IS NOT NULL OR contact_id IS NOT NULL);

-- Attachments no contact holds go with their lead, whoever deletes it (the API, the test-lead
-- clean-up, an operator): before the row goes, so the foreign key's SET NULL never meets them.
-- SECURITY INVOKER: it deletes as the caller, under the caller's row-level security.
-- +goose StatementBegin
CREATE FUNCTION lead_attachments_drop_unheld() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  DELETE FROM public.lead_attachments
  WHERE company_id = OLD.company_id AND lead_id = OLD.id AND contact_id IS NULL;
  RETURN OLD;
END $$;
-- +goose StatementEnd
REVOKE ALL ON FUNCTION lead_attachments_drop_unheld() FROM PUBLIC;
CREATE TRIGGER lead_attachments_drop_unheld BEFORE DELETE ON leads
  FOR EACH ROW EXECUTE FUNCTION lead_attachments_drop_unheld();

-- +goose Down
DROP TRIGGER lead_attachments_drop_unheld ON leads;
DROP FUNCTION lead_attachments_drop_unheld();
ALTER TABLE lead_attachments DROP CONSTRAINT tenant_lead_attachments_held;
ALTER TABLE lead_attachments DROP CONSTRAINT tenant_lead_attachments_lead;
ALTER TABLE lead_attachments ADD CONSTRAINT tenant_lead_attachments_lead
  FOREIGN KEY (company_id, lead_id) REFERENCES leads (company_id, id) ON DELETE CASCADE;
