-- Hand-written: row-level security, tenant keys, visibility and privileges of documents
-- (issue 12). A document goes with its contact (ON DELETE CASCADE; the blobs are removed after
-- the commit, app/documents) and is as visible as it. A contract's document names the
-- contract's contact: the composite key to (company_id, id, contact_id) of contracts makes that
-- true on insert and keeps it true when the contract moves to another contact (ON UPDATE
-- CASCADE); when the contract is deleted the document stays with the contact.

-- +goose Up
SELECT app_enable_tenant_rls('documents');

CREATE UNIQUE INDEX tenant_documents_company_id_id ON documents (company_id, id);
CREATE UNIQUE INDEX tenant_contracts_company_id_id_contact_id ON contracts (company_id, id, contact_id);
ALTER TABLE documents ADD CONSTRAINT tenant_documents_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE documents ADD CONSTRAINT tenant_documents_contract
  FOREIGN KEY (company_id, contract_id, contact_id) REFERENCES contracts (company_id, id, contact_id)
  ON UPDATE CASCADE ON DELETE SET NULL (contract_id);

SELECT app_restrict_visibility('documents', 'contact_visibility', 'app_contact_visible(contact_id)');

-- Documents are immutable: the API uploads, reads and deletes them.
REVOKE UPDATE ON documents FROM brokerdesk_app;

-- +goose Down
GRANT UPDATE ON documents TO brokerdesk_app;
ALTER TABLE documents DROP CONSTRAINT tenant_documents_contract;
ALTER TABLE documents DROP CONSTRAINT tenant_documents_contact;
DROP INDEX tenant_contracts_company_id_id_contact_id;
DROP INDEX tenant_documents_company_id_id;
