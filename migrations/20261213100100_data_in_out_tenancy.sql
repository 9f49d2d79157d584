-- Hand-written (issue 25): row-level security, composite tenant keys and visibility of contact
-- imports, privacy requests, the records an erasure must keep, and contract extractions.
--   - Imports and their rows are visible as their creator's contacts are
--     (app_visible_owner(creator_id)): a user-bound credential sees its own imports and those of
--     whoever delegated to it; company keys and admins see all. The rows' cells are personal
--     data: a row that became or matched a contact loses the link when the contact goes, and the
--     erasure job blanks its cells.
--   - A privacy request outlives its contact (the record that an erasure was done), so
--     contact_id has no foreign key; owner_id, the contact's owner when it was made, decides who
--     sees it.
--   - retained_records holds what an erasure could not delete yet (statutory retention), blocked:
--     the app role has no privilege at all on it, so no request can read it; the job role
--     (brokerdesk_jobs) writes and sweeps it.
--   - An extraction is as visible as its document's contact and goes with the document.

-- +goose Up
SELECT app_enable_tenant_rls('contact_imports');
SELECT app_enable_tenant_rls('contact_import_rows');
SELECT app_enable_tenant_rls('privacy_requests');
SELECT app_enable_tenant_rls('retained_records');
SELECT app_enable_tenant_rls('contract_extractions');

CREATE UNIQUE INDEX tenant_contact_imports_company_id_id ON contact_imports (company_id, id);
ALTER TABLE contact_imports ADD CONSTRAINT tenant_contact_imports_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE contact_imports ADD CONSTRAINT tenant_contact_imports_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
ALTER TABLE contact_import_rows ADD CONSTRAINT tenant_contact_import_rows_import
  FOREIGN KEY (company_id, import_id) REFERENCES contact_imports (company_id, id) ON DELETE CASCADE;
ALTER TABLE contact_import_rows ADD CONSTRAINT tenant_contact_import_rows_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE SET NULL (contact_id);
SELECT app_restrict_visibility('contact_imports', 'import_visibility', 'app_visible_owner(creator_id)');
SELECT app_restrict_visibility('contact_import_rows', 'import_visibility', 'app_visible_owner(creator_id)');

ALTER TABLE privacy_requests ADD CONSTRAINT tenant_privacy_requests_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE privacy_requests ADD CONSTRAINT tenant_privacy_requests_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
SELECT app_restrict_visibility('privacy_requests', 'privacy_visibility', 'app_visible_owner(owner_id)');

ALTER TABLE retained_records ADD CONSTRAINT tenant_retained_records_request
  FOREIGN KEY (request_id) REFERENCES privacy_requests (id);
REVOKE ALL ON retained_records FROM brokerdesk_app;
GRANT SELECT, INSERT, DELETE ON retained_records TO brokerdesk_jobs;

ALTER TABLE contract_extractions ADD CONSTRAINT tenant_contract_extractions_document
  FOREIGN KEY (company_id, document_id) REFERENCES documents (company_id, id) ON DELETE CASCADE;
ALTER TABLE contract_extractions ADD CONSTRAINT tenant_contract_extractions_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE contract_extractions ADD CONSTRAINT tenant_contract_extractions_contract
  FOREIGN KEY (company_id, contract_id) REFERENCES contracts (company_id, id) ON DELETE SET NULL (contract_id);
ALTER TABLE contract_extractions ADD CONSTRAINT tenant_contract_extractions_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
SELECT app_restrict_visibility('contract_extractions', 'contact_visibility', 'app_contact_visible(contact_id)');

-- The API never deletes these records: imports and extractions are kept with what they wrote,
-- privacy requests are the proof of what was done (a contact's erasure deletes its rows by
-- the paths above, on the job role).
REVOKE DELETE ON contact_imports, contact_import_rows, privacy_requests, contract_extractions FROM brokerdesk_app;

-- +goose Down
GRANT DELETE ON contact_imports, contact_import_rows, privacy_requests, contract_extractions TO brokerdesk_app;
REVOKE SELECT, INSERT, DELETE ON retained_records FROM brokerdesk_jobs;
SELECT 1;
