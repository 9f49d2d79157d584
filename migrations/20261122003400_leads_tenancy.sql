-- Hand-written: RLS and composite tenant keys for leads and contacts, and the default lead
-- stages of existing companies.

-- +goose Up
SELECT app_enable_tenant_rls('leads');
SELECT app_enable_tenant_rls('lead_submissions');
SELECT app_enable_tenant_rls('lead_stages');
SELECT app_enable_tenant_rls('lead_attachments');
SELECT app_enable_tenant_rls('contacts');
SELECT app_enable_tenant_rls('contact_phones');

CREATE UNIQUE INDEX tenant_lead_stages_company_id_id ON lead_stages (company_id, id);
CREATE UNIQUE INDEX tenant_leads_company_id_id ON leads (company_id, id);
CREATE UNIQUE INDEX tenant_contacts_company_id_id ON contacts (company_id, id);

ALTER TABLE leads ADD CONSTRAINT tenant_leads_stage
  FOREIGN KEY (company_id, stage_id) REFERENCES lead_stages (company_id, id);
ALTER TABLE leads ADD CONSTRAINT tenant_leads_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
ALTER TABLE leads ADD CONSTRAINT tenant_leads_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE SET NULL (contact_id);
ALTER TABLE lead_submissions ADD CONSTRAINT tenant_lead_submissions_lead
  FOREIGN KEY (company_id, lead_id) REFERENCES leads (company_id, id) ON DELETE CASCADE;
ALTER TABLE lead_attachments ADD CONSTRAINT tenant_lead_attachments_lead
  FOREIGN KEY (company_id, lead_id) REFERENCES leads (company_id, id) ON DELETE CASCADE;
ALTER TABLE lead_attachments ADD CONSTRAINT tenant_lead_attachments_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE contacts ADD CONSTRAINT tenant_contacts_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
ALTER TABLE contact_phones ADD CONSTRAINT tenant_contact_phones_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;

-- Default stages for companies that exist already (new companies get them from the operator).
SET LOCAL ROLE brokerdesk_operator;
INSERT INTO lead_stages (id, company_id, key, name, color, position, is_final, created_at, updated_at)
SELECT gen_random_uuid(), c.id, s.key, s.name, s.color, s.position, s.is_final, now(), now()
FROM companies c
CROSS JOIN (VALUES ('new', 'Neu', '#3b82f6', 0, false), ('converted', 'Konvertiert', '#22c55e', 1000, true))
  AS s(key, name, color, position, is_final)
ON CONFLICT (company_id, key) DO NOTHING;
RESET ROLE;

-- +goose Down
ALTER TABLE contact_phones DROP CONSTRAINT tenant_contact_phones_contact;
ALTER TABLE contacts DROP CONSTRAINT tenant_contacts_owner;
ALTER TABLE lead_attachments DROP CONSTRAINT tenant_lead_attachments_contact;
ALTER TABLE lead_attachments DROP CONSTRAINT tenant_lead_attachments_lead;
ALTER TABLE lead_submissions DROP CONSTRAINT tenant_lead_submissions_lead;
ALTER TABLE leads DROP CONSTRAINT tenant_leads_contact;
ALTER TABLE leads DROP CONSTRAINT tenant_leads_owner;
ALTER TABLE leads DROP CONSTRAINT tenant_leads_stage;
