-- Hand-written (issue 22): row-level security, composite tenant keys, visibility and the app
-- role's privileges of document templates, standard documents, signature requests and advice
-- records (docs/decisions/signatures.md). Requests, signers and advice records are as visible
-- as their contact (VisibleByContact in ent/schema/signature.go says the same).

-- +goose Up
SELECT app_enable_tenant_rls('document_templates');
SELECT app_enable_tenant_rls('standard_documents');
SELECT app_enable_tenant_rls('signature_requests');
SELECT app_enable_tenant_rls('signature_signers');
SELECT app_enable_tenant_rls('advice_records');

CREATE UNIQUE INDEX tenant_signature_requests_company_id_id ON signature_requests (company_id, id);
-- A signer's contact is its request's: the key below names both.
CREATE UNIQUE INDEX tenant_signature_requests_company_id_id_contact ON signature_requests (company_id, id, contact_id);

ALTER TABLE signature_requests ADD CONSTRAINT tenant_signature_requests_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE signature_requests ADD CONSTRAINT tenant_signature_requests_mailbox
  FOREIGN KEY (company_id, mailbox_id) REFERENCES mailboxes (company_id, id) ON DELETE SET NULL (mailbox_id);
ALTER TABLE signature_requests ADD CONSTRAINT tenant_signature_requests_signed_document
  FOREIGN KEY (company_id, signed_document_id) REFERENCES documents (company_id, id) ON DELETE SET NULL (signed_document_id);
ALTER TABLE signature_requests ADD CONSTRAINT tenant_signature_requests_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE signature_signers ADD CONSTRAINT tenant_signature_signers_request
  FOREIGN KEY (company_id, request_id, contact_id) REFERENCES signature_requests (company_id, id, contact_id) ON DELETE CASCADE;
ALTER TABLE signature_signers ADD CONSTRAINT tenant_signature_signers_user
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE SET NULL (user_id);
ALTER TABLE advice_records ADD CONSTRAINT tenant_advice_records_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE advice_records ADD CONSTRAINT tenant_advice_records_contract
  FOREIGN KEY (company_id, contract_id) REFERENCES contracts (company_id, id) ON DELETE SET NULL (contract_id);
ALTER TABLE advice_records ADD CONSTRAINT tenant_advice_records_advisor
  FOREIGN KEY (company_id, advisor_id) REFERENCES users (company_id, id) ON DELETE SET NULL (advisor_id);
ALTER TABLE advice_records ADD CONSTRAINT tenant_advice_records_document
  FOREIGN KEY (company_id, document_id) REFERENCES documents (company_id, id) ON DELETE SET NULL (document_id);
ALTER TABLE advice_records ADD CONSTRAINT tenant_advice_records_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
-- A locked record stays locked: the database refuses what the service would refuse (409).
ALTER TABLE advice_records ADD CONSTRAINT tenant_advice_records_locked
  CHECK ((status = 'locked') = (locked_at IS NOT NULL));

SELECT app_restrict_visibility('signature_requests', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('signature_signers', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('advice_records', 'contact_visibility', 'app_contact_visible(contact_id)');

-- What request and job work may do (test/schema appPrivileges says why for each).
-- Templates and standard documents are the product's and the operator's: the API reads them.
REVOKE INSERT, DELETE, UPDATE ON document_templates, standard_documents FROM brokerdesk_app;
-- A request is never deleted by the API (it goes with its contact); signers neither.
REVOKE DELETE ON signature_requests, signature_signers FROM brokerdesk_app;
-- An advice record is documentation the IDD requires: it goes only with its contact.
REVOKE DELETE ON advice_records FROM brokerdesk_app;

-- +goose Down
GRANT DELETE ON advice_records TO brokerdesk_app;
GRANT DELETE ON signature_requests, signature_signers TO brokerdesk_app;
GRANT INSERT, DELETE, UPDATE ON document_templates, standard_documents TO brokerdesk_app;
SELECT 1;
