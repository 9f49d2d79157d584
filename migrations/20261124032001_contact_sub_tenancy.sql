-- Hand-written: row-level security, composite tenant keys and visibility of the contact
-- sub-resources (issue 8): relationships, household finances, activities (notes, e-mails,
-- system entries). Each row goes with its contact (ON DELETE CASCADE) and is as visible as it;
-- a relationship is visible only when both its contacts are.

-- +goose Up
SELECT app_enable_tenant_rls('contact_relationships');
SELECT app_enable_tenant_rls('contact_finances');
SELECT app_enable_tenant_rls('contact_activities');

ALTER TABLE contact_relationships ADD CONSTRAINT tenant_contact_relationships_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE contact_relationships ADD CONSTRAINT tenant_contact_relationships_related
  FOREIGN KEY (company_id, related_contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE contact_relationships ADD CONSTRAINT tenant_contact_relationships_not_self
  CHECK (contact_id <> related_contact_id);
ALTER TABLE contact_finances ADD CONSTRAINT tenant_contact_finances_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE contact_activities ADD CONSTRAINT tenant_contact_activities_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;

SELECT app_restrict_visibility('contact_relationships', 'contact_visibility',
  'app_contact_visible(contact_id) AND app_contact_visible(related_contact_id)');
SELECT app_restrict_visibility('contact_finances', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('contact_activities', 'contact_visibility', 'app_contact_visible(contact_id)');

-- +goose Down
ALTER TABLE contact_activities DROP CONSTRAINT tenant_contact_activities_contact;
ALTER TABLE contact_finances DROP CONSTRAINT tenant_contact_finances_contact;
ALTER TABLE contact_relationships DROP CONSTRAINT tenant_contact_relationships_not_self;
ALTER TABLE contact_relationships DROP CONSTRAINT tenant_contact_relationships_related;
ALTER TABLE contact_relationships DROP CONSTRAINT tenant_contact_relationships_contact;
