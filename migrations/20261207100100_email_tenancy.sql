-- Hand-written (issue 21): row-level security, composite tenant keys, visibility and the app
-- role's privileges of the e-mail area (docs/decisions/email.md). The ent rules in
-- ent/rule/email.go say the same visibility in SQL.

-- +goose Up
SELECT app_enable_tenant_rls('mailboxes');
SELECT app_enable_tenant_rls('mailbox_folders');
SELECT app_enable_tenant_rls('email_threads');
SELECT app_enable_tenant_rls('emails');
SELECT app_enable_tenant_rls('email_attachments');
SELECT app_enable_tenant_rls('email_links');
SELECT app_enable_tenant_rls('email_templates');
SELECT app_enable_tenant_rls('email_opt_outs');
SELECT app_enable_tenant_rls('company_points');
SELECT app_enable_tenant_rls('point_entries');
SELECT app_enable_tenant_rls('correspondence_cases');

CREATE UNIQUE INDEX tenant_mailboxes_company_id_id ON mailboxes (company_id, id);
CREATE UNIQUE INDEX tenant_email_threads_company_id_id ON email_threads (company_id, id);
CREATE UNIQUE INDEX tenant_emails_company_id_id ON emails (company_id, id);
CREATE UNIQUE INDEX tenant_email_templates_company_id_id ON email_templates (company_id, id);
-- GET /email-threads?q=: substring search over subject, addresses and text (pg_trgm).
CREATE INDEX tenant_emails_search ON emails USING gin (search_text gin_trgm_ops);

ALTER TABLE mailboxes ADD CONSTRAINT tenant_mailboxes_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
ALTER TABLE mailbox_folders ADD CONSTRAINT tenant_mailbox_folders_mailbox
  FOREIGN KEY (company_id, mailbox_id) REFERENCES mailboxes (company_id, id) ON DELETE CASCADE;
ALTER TABLE email_threads ADD CONSTRAINT tenant_email_threads_mailbox
  FOREIGN KEY (company_id, mailbox_id) REFERENCES mailboxes (company_id, id) ON DELETE CASCADE;
ALTER TABLE emails ADD CONSTRAINT tenant_emails_thread
  FOREIGN KEY (company_id, thread_id) REFERENCES email_threads (company_id, id) ON DELETE CASCADE;
ALTER TABLE emails ADD CONSTRAINT tenant_emails_mailbox
  FOREIGN KEY (company_id, mailbox_id) REFERENCES mailboxes (company_id, id) ON DELETE CASCADE;
ALTER TABLE emails ADD CONSTRAINT tenant_emails_template
  FOREIGN KEY (company_id, template_id) REFERENCES email_templates (company_id, id) ON DELETE SET NULL (template_id);
ALTER TABLE emails ADD CONSTRAINT tenant_emails_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE email_attachments ADD CONSTRAINT tenant_email_attachments_email
  FOREIGN KEY (company_id, email_id) REFERENCES emails (company_id, id) ON DELETE CASCADE;
ALTER TABLE email_links ADD CONSTRAINT tenant_email_links_email
  FOREIGN KEY (company_id, email_id) REFERENCES emails (company_id, id) ON DELETE CASCADE;
ALTER TABLE email_links ADD CONSTRAINT tenant_email_links_thread
  FOREIGN KEY (company_id, thread_id) REFERENCES email_threads (company_id, id) ON DELETE CASCADE;
ALTER TABLE email_links ADD CONSTRAINT tenant_email_links_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE email_links ADD CONSTRAINT tenant_email_links_lead
  FOREIGN KEY (company_id, lead_id) REFERENCES leads (company_id, id) ON DELETE CASCADE;
ALTER TABLE email_links ADD CONSTRAINT tenant_email_links_one_target
  CHECK ((contact_id IS NULL) <> (lead_id IS NULL));
ALTER TABLE email_opt_outs ADD CONSTRAINT tenant_email_opt_outs_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
-- Concurrent sends take points with one conditional UPDATE; the CHECK is the floor beneath it.
ALTER TABLE company_points ADD CONSTRAINT tenant_company_points_not_negative CHECK (balance >= 0);
ALTER TABLE point_entries ADD CONSTRAINT tenant_point_entries_email
  FOREIGN KEY (company_id, email_id) REFERENCES emails (company_id, id) ON DELETE SET NULL (email_id);
ALTER TABLE correspondence_cases ADD CONSTRAINT tenant_correspondence_cases_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE correspondence_cases ADD CONSTRAINT tenant_correspondence_cases_insurer
  FOREIGN KEY (insurer_id) REFERENCES insurers (id);
ALTER TABLE correspondence_cases ADD CONSTRAINT tenant_correspondence_cases_mailbox
  FOREIGN KEY (company_id, mailbox_id) REFERENCES mailboxes (company_id, id) ON DELETE SET NULL (mailbox_id);
ALTER TABLE correspondence_cases ADD CONSTRAINT tenant_correspondence_cases_email
  FOREIGN KEY (company_id, email_id) REFERENCES emails (company_id, id) ON DELETE SET NULL (email_id);
ALTER TABLE correspondence_cases ADD CONSTRAINT tenant_correspondence_cases_thread
  FOREIGN KEY (company_id, thread_id) REFERENCES email_threads (company_id, id) ON DELETE SET NULL (thread_id);
ALTER TABLE correspondence_cases ADD CONSTRAINT tenant_correspondence_cases_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);

-- Visibility. A shared mailbox is everyone's; a personal one its owner's (and delegates').
-- A link is as visible as its contact or lead. A thread is visible through its mailbox or
-- through a visible link of one of its messages; messages, attachments and folders follow
-- their thread or mailbox. The policies look rows up through the inlinable functions below
-- (as app_contact_row does, 20261125030000): the row-level security of the table looked at
-- applies inside, and no policy depends on another table by name, so schema tools can drop
-- the tables (threads and links refer to each other).
-- +goose StatementBegin
CREATE FUNCTION app_mailbox_row(mailbox uuid) RETURNS SETOF boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
AS $$ SELECT true FROM public.mailboxes m WHERE m.id OPERATOR(pg_catalog.=) mailbox $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION app_lead_row(lead uuid) RETURNS SETOF boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
AS $$ SELECT true FROM public.leads x WHERE x.id OPERATOR(pg_catalog.=) lead $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION app_email_thread_row(thread uuid) RETURNS SETOF boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
AS $$ SELECT true FROM public.email_threads t WHERE t.id OPERATOR(pg_catalog.=) thread $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION app_email_thread_linked(thread uuid) RETURNS SETOF boolean
LANGUAGE sql STABLE PARALLEL RESTRICTED
AS $$ SELECT true FROM public.email_links l WHERE l.thread_id OPERATOR(pg_catalog.=) thread LIMIT 1 $$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION app_mailbox_row(uuid), app_lead_row(uuid), app_email_thread_row(uuid),
  app_email_thread_linked(uuid) TO brokerdesk_app, brokerdesk_operator;

SELECT app_restrict_visibility('mailboxes', 'mailbox_visibility', 'shared OR app_visible_owner(owner_id)');
SELECT app_restrict_visibility('mailbox_folders', 'mailbox_visibility',
  'coalesce((SELECT v FROM public.app_mailbox_row(mailbox_id) v), false)');
SELECT app_restrict_visibility('email_links', 'email_link_visibility',
  'CASE WHEN contact_id IS NOT NULL THEN app_contact_visible(contact_id) ELSE coalesce((SELECT v FROM public.app_lead_row(lead_id) v), false) END');
SELECT app_restrict_visibility('email_threads', 'email_thread_visibility',
  'coalesce((SELECT v FROM public.app_mailbox_row(mailbox_id) v), false) OR coalesce((SELECT v FROM public.app_email_thread_linked(id) v), false)');
SELECT app_restrict_visibility('emails', 'email_thread_visibility',
  'coalesce((SELECT v FROM public.app_email_thread_row(thread_id) v), false)');
SELECT app_restrict_visibility('email_attachments', 'email_thread_visibility',
  'coalesce((SELECT v FROM public.app_email_thread_row(thread_id) v), false)');
SELECT app_restrict_visibility('correspondence_cases', 'contact_visibility', 'app_contact_visible(contact_id)');

-- What request and job work may do (test/schema appPrivileges says why for each).
REVOKE INSERT, DELETE, UPDATE ON mailboxes FROM brokerdesk_app;
GRANT UPDATE (sent_folder, sync_state, sync_error, synced_at, updated_at) ON mailboxes TO brokerdesk_app;
REVOKE DELETE ON mailbox_folders, email_threads, emails FROM brokerdesk_app;
REVOKE DELETE, UPDATE ON email_attachments, email_links, point_entries FROM brokerdesk_app;
REVOKE INSERT, DELETE, UPDATE ON email_templates FROM brokerdesk_app;
REVOKE UPDATE ON email_opt_outs FROM brokerdesk_app;
REVOKE INSERT, DELETE, UPDATE ON company_points FROM brokerdesk_app;
GRANT UPDATE (balance, updated_at) ON company_points TO brokerdesk_app;

-- +goose Down
DROP POLICY IF EXISTS email_thread_visibility ON emails;
DROP POLICY IF EXISTS email_thread_visibility_update ON emails;
DROP POLICY IF EXISTS email_thread_visibility_delete ON emails;
DROP POLICY IF EXISTS email_thread_visibility ON email_attachments;
DROP POLICY IF EXISTS email_thread_visibility_update ON email_attachments;
DROP POLICY IF EXISTS email_thread_visibility_delete ON email_attachments;
DROP POLICY IF EXISTS email_thread_visibility ON email_threads;
DROP POLICY IF EXISTS email_thread_visibility_update ON email_threads;
DROP POLICY IF EXISTS email_thread_visibility_delete ON email_threads;
DROP POLICY IF EXISTS email_link_visibility ON email_links;
DROP POLICY IF EXISTS email_link_visibility_update ON email_links;
DROP POLICY IF EXISTS email_link_visibility_delete ON email_links;
DROP POLICY IF EXISTS mailbox_visibility ON mailbox_folders;
DROP POLICY IF EXISTS mailbox_visibility_update ON mailbox_folders;
DROP POLICY IF EXISTS mailbox_visibility_delete ON mailbox_folders;
DROP FUNCTION app_email_thread_linked(uuid);
DROP FUNCTION app_email_thread_row(uuid);
DROP FUNCTION app_lead_row(uuid);
DROP FUNCTION app_mailbox_row(uuid);
GRANT INSERT, DELETE, UPDATE ON company_points TO brokerdesk_app;
GRANT UPDATE ON email_opt_outs TO brokerdesk_app;
GRANT INSERT, DELETE, UPDATE ON email_templates TO brokerdesk_app;
GRANT DELETE, UPDATE ON email_attachments, email_links, point_entries TO brokerdesk_app;
GRANT DELETE ON mailbox_folders, email_threads, emails TO brokerdesk_app;
GRANT INSERT, DELETE, UPDATE ON mailboxes TO brokerdesk_app;
SELECT 1;
