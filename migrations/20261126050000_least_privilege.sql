-- Hand-written: least privilege, second pass (issue 7 §4). Each grant below was checked against
-- the statements request work issues (HTTP handlers, river workers and the triggers they fire,
-- all as the app role); test/schema's appPrivileges names the endpoint or job that needs what
-- stays.
--   external_refs: ExternalRefMixin replaces a resource's references by delete + insert, never
--     updates one.
--   lead_submissions, lead_stages: inserted and read; no endpoint changes one (submissions go
--     with their lead by foreign-key cascade, which runs as the table owner).
--   contact_relationships: created and deleted in pairs, never changed.
--   contact_finances: PUT /contacts/{id}/finance creates or updates the one row; it goes with
--     its contact by cascade.
--   custom_field_definitions: POST /custom-fields only; the spec changes and deletes none.
--   oauth_consents: the authorize endpoint upserts (scopes, updated_at); nothing deletes one
--     (they go with their user or client by cascade).
--   oauth_tokens: fosite's storage only ever flips active (use, rotation, revocation); scopes,
--     session and expiry of a stored token are not the app role's to change.
--   contact_activities: PATCH /contacts/{id}/notes/{id} changes the content of a note (ent also
--     sets updated_at and bumps version); every other column is immutable, and system entries
--     and e-mails are immutable altogether (spec), which the restrictive policies hold for the
--     app role: only notes may be updated or deleted.

-- +goose Up
REVOKE UPDATE ON external_refs, lead_submissions, lead_stages, contact_relationships FROM brokerdesk_app;
REVOKE DELETE ON contact_finances FROM brokerdesk_app;
REVOKE DELETE, UPDATE ON custom_field_definitions FROM brokerdesk_app;
REVOKE DELETE, UPDATE ON oauth_consents FROM brokerdesk_app;
GRANT UPDATE (scopes, updated_at) ON oauth_consents TO brokerdesk_app;
REVOKE UPDATE ON oauth_tokens FROM brokerdesk_app;
GRANT UPDATE (active) ON oauth_tokens TO brokerdesk_app;
REVOKE UPDATE ON contact_activities FROM brokerdesk_app;
GRANT UPDATE (content, updated_at, version) ON contact_activities TO brokerdesk_app;
CREATE POLICY notes_only_update ON contact_activities AS RESTRICTIVE FOR UPDATE TO brokerdesk_app
  USING (kind = 'note') WITH CHECK (kind = 'note');
CREATE POLICY notes_only_delete ON contact_activities AS RESTRICTIVE FOR DELETE TO brokerdesk_app
  USING (kind = 'note');

-- +goose Down
DROP POLICY notes_only_delete ON contact_activities;
DROP POLICY notes_only_update ON contact_activities;
REVOKE UPDATE (content, updated_at, version) ON contact_activities FROM brokerdesk_app;
GRANT UPDATE ON contact_activities TO brokerdesk_app;
REVOKE UPDATE (scopes, updated_at) ON oauth_consents FROM brokerdesk_app;
GRANT DELETE, UPDATE ON oauth_consents TO brokerdesk_app;
REVOKE UPDATE (active) ON oauth_tokens FROM brokerdesk_app;
GRANT UPDATE ON oauth_tokens TO brokerdesk_app;
GRANT DELETE, UPDATE ON custom_field_definitions TO brokerdesk_app;
GRANT DELETE ON contact_finances TO brokerdesk_app;
GRANT UPDATE ON external_refs, lead_submissions, lead_stages, contact_relationships TO brokerdesk_app;
