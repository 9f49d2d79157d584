-- Hand-written (issue 24): row-level security, composite tenant keys and visibility of the
-- commission area (docs/decisions/commissions.md). Statements and liability rules are company
-- data every commissions reader sees; an entry matched to a contract is as visible as the
-- contract's contact (contact_id, kept in step with the contract's), an unmatched one is
-- visible to every commissions reader (VisibleByContact in ent/schema/commission.go says the
-- same).

-- +goose Up
SELECT app_enable_tenant_rls('commission_statements');
SELECT app_enable_tenant_rls('commission_entries');
SELECT app_enable_tenant_rls('commission_liability_rules');

CREATE UNIQUE INDEX tenant_commission_statements_company_id_id ON commission_statements (company_id, id);
ALTER TABLE commission_statements ADD CONSTRAINT tenant_commission_statements_insurer
  FOREIGN KEY (insurer_id) REFERENCES insurers (id);
ALTER TABLE commission_statements ADD CONSTRAINT tenant_commission_statements_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE commission_entries ADD CONSTRAINT tenant_commission_entries_statement
  FOREIGN KEY (company_id, statement_id) REFERENCES commission_statements (company_id, id) ON DELETE CASCADE;
ALTER TABLE commission_entries ADD CONSTRAINT tenant_commission_entries_insurer
  FOREIGN KEY (insurer_id) REFERENCES insurers (id);
-- An entry's contact is its contract's: the key names both (contracts carry
-- tenant_contracts_company_id_id_contact_id) and follows a contract moved to another contact.
-- A deleted contract unmatches its entries (the income stays on the statement); a deleted
-- contact takes its contracts and so unmatches them too.
ALTER TABLE commission_entries ADD CONSTRAINT tenant_commission_entries_contract
  FOREIGN KEY (company_id, contract_id, contact_id) REFERENCES contracts (company_id, id, contact_id)
  ON UPDATE CASCADE ON DELETE SET NULL (contract_id, contact_id);
ALTER TABLE commission_entries ADD CONSTRAINT tenant_commission_entries_matched
  CHECK ((contract_id IS NULL) = (contact_id IS NULL) AND (contract_id IS NULL) = (matched_by IS NULL));
ALTER TABLE commission_liability_rules ADD CONSTRAINT tenant_commission_liability_rules_insurer
  FOREIGN KEY (insurer_id) REFERENCES insurers (id);
-- One rule per (company, insurer or none, contract type or none).
CREATE UNIQUE INDEX tenant_commission_liability_rules_key ON commission_liability_rules (company_id, insurer_id, contract_type)
  NULLS NOT DISTINCT;

SELECT app_restrict_visibility('commission_entries', 'contact_visibility', 'contact_id IS NULL OR app_contact_visible(contact_id)');

-- What request and job work may do (test/schema appPrivileges says why for each).
-- A statement is never deleted by the API (the record of income received); its entries go
-- with it only. Liability rules are the operator's (brokerdesk commission-rule …).
REVOKE DELETE ON commission_statements, commission_entries FROM brokerdesk_app;
REVOKE INSERT, UPDATE, DELETE ON commission_liability_rules FROM brokerdesk_app;

-- +goose Down
GRANT INSERT, UPDATE, DELETE ON commission_liability_rules TO brokerdesk_app;
GRANT DELETE ON commission_statements, commission_entries TO brokerdesk_app;
SELECT 1;
