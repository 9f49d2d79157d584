-- Hand-written: RLS and composite tenant keys of tasks, comments, appointments and calendar
-- tokens; the list order index of tasks; the calendar feed's token lookup.

-- +goose Up
SELECT app_enable_tenant_rls('tasks');
SELECT app_enable_tenant_rls('task_comments');
SELECT app_enable_tenant_rls('appointments');
SELECT app_enable_tenant_rls('appointment_exceptions');
SELECT app_enable_tenant_rls('calendar_tokens');

-- Visibility (issue 8's layer): a task or appointment about a contact is visible when the
-- contact is; one without a contact to its assignee/owner, its creator (and their delegates)
-- and users who see everything. Comments and exceptions follow their task or series (RLS on
-- the parent applies inside the subquery). ent: rule.FilterVisibleContactElseOwners.
SELECT app_restrict_visibility('tasks', 'task_visibility',
  'CASE WHEN contact_id IS NOT NULL THEN app_contact_visible(contact_id) ELSE app_visible_owner(assignee_id) OR app_visible_owner(creator_id) END');
SELECT app_restrict_visibility('appointments', 'appointment_visibility',
  'CASE WHEN contact_id IS NOT NULL THEN app_contact_visible(contact_id) ELSE app_visible_owner(owner_id) OR app_visible_owner(creator_id) END');
SELECT app_restrict_visibility('task_comments', 'task_visibility',
  'EXISTS (SELECT 1 FROM tasks t WHERE t.company_id = task_comments.company_id AND t.id = task_comments.task_id)');
SELECT app_restrict_visibility('appointment_exceptions', 'appointment_visibility',
  'EXISTS (SELECT 1 FROM appointments a WHERE a.company_id = appointment_exceptions.company_id AND a.id = appointment_exceptions.appointment_id)');

CREATE UNIQUE INDEX tenant_tasks_company_id_id ON tasks (company_id, id);
CREATE UNIQUE INDEX tenant_task_comments_company_id_id ON task_comments (company_id, id);
CREATE UNIQUE INDEX tenant_appointments_company_id_id ON appointments (company_id, id);
-- GET /tasks: due date (none last), then id.
CREATE INDEX tenant_tasks_due ON tasks (company_id, (COALESCE(due_at, 'infinity'::timestamptz)), id);

ALTER TABLE tasks ADD CONSTRAINT tenant_tasks_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE SET NULL (contact_id);
ALTER TABLE tasks ADD CONSTRAINT tenant_tasks_lead
  FOREIGN KEY (company_id, lead_id) REFERENCES leads (company_id, id) ON DELETE SET NULL (lead_id);
ALTER TABLE tasks ADD CONSTRAINT tenant_tasks_assignee
  FOREIGN KEY (company_id, assignee_id) REFERENCES users (company_id, id) ON DELETE SET NULL (assignee_id);
ALTER TABLE tasks ADD CONSTRAINT tenant_tasks_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE task_comments ADD CONSTRAINT tenant_task_comments_task
  FOREIGN KEY (company_id, task_id) REFERENCES tasks (company_id, id) ON DELETE CASCADE;
ALTER TABLE task_comments ADD CONSTRAINT tenant_task_comments_parent
  FOREIGN KEY (company_id, parent_id) REFERENCES task_comments (company_id, id) ON DELETE CASCADE;
ALTER TABLE task_comments ADD CONSTRAINT tenant_task_comments_author
  FOREIGN KEY (company_id, author_id) REFERENCES users (company_id, id) ON DELETE SET NULL (author_id);
ALTER TABLE appointments ADD CONSTRAINT tenant_appointments_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);
ALTER TABLE appointments ADD CONSTRAINT tenant_appointments_creator
  FOREIGN KEY (company_id, creator_id) REFERENCES users (company_id, id) ON DELETE SET NULL (creator_id);
ALTER TABLE appointments ADD CONSTRAINT tenant_appointments_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE SET NULL (contact_id);
ALTER TABLE appointment_exceptions ADD CONSTRAINT tenant_appointment_exceptions_appointment
  FOREIGN KEY (company_id, appointment_id) REFERENCES appointments (company_id, id) ON DELETE CASCADE;
ALTER TABLE calendar_tokens ADD CONSTRAINT tenant_calendar_tokens_user
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE;

-- The calendar feed (GET /calendar/{token}.ics) has no API key: the token's SHA-256 names the
-- user. Owned by brokerdesk_auth, whose policy alone reads tokens of every company; no row when
-- the token is unknown, the user inactive or the company inactive.
GRANT SELECT ON calendar_tokens TO brokerdesk_auth;
CREATE POLICY auth_lookup ON calendar_tokens FOR SELECT TO brokerdesk_auth USING (true);
-- +goose StatementBegin
CREATE FUNCTION calendar_feed_user(p_hash bytea) RETURNS TABLE (company_id uuid, user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT t.company_id, u.id, u.role::text
  FROM public.calendar_tokens t
  JOIN public.companies c ON c.id = t.company_id AND c.status = 'active'
  JOIN public.users u ON u.company_id = t.company_id AND u.id = t.user_id AND u.status = 'active'
  WHERE t.token_hash = p_hash;
END $$;
-- +goose StatementEnd
ALTER FUNCTION calendar_feed_user(bytea) OWNER TO brokerdesk_auth;
REVOKE ALL ON FUNCTION calendar_feed_user(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION calendar_feed_user(bytea) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION calendar_feed_user(bytea);
DROP POLICY auth_lookup ON calendar_tokens;
REVOKE SELECT ON calendar_tokens FROM brokerdesk_auth;
ALTER TABLE calendar_tokens DROP CONSTRAINT tenant_calendar_tokens_user;
ALTER TABLE appointment_exceptions DROP CONSTRAINT tenant_appointment_exceptions_appointment;
ALTER TABLE appointments DROP CONSTRAINT tenant_appointments_contact;
ALTER TABLE appointments DROP CONSTRAINT tenant_appointments_creator;
ALTER TABLE appointments DROP CONSTRAINT tenant_appointments_owner;
ALTER TABLE task_comments DROP CONSTRAINT tenant_task_comments_author;
ALTER TABLE task_comments DROP CONSTRAINT tenant_task_comments_parent;
ALTER TABLE task_comments DROP CONSTRAINT tenant_task_comments_task;
ALTER TABLE tasks DROP CONSTRAINT tenant_tasks_creator;
ALTER TABLE tasks DROP CONSTRAINT tenant_tasks_assignee;
ALTER TABLE tasks DROP CONSTRAINT tenant_tasks_lead;
ALTER TABLE tasks DROP CONSTRAINT tenant_tasks_contact;
DROP INDEX tenant_tasks_due;
DROP INDEX tenant_appointments_company_id_id;
DROP INDEX tenant_task_comments_company_id_id;
DROP INDEX tenant_tasks_company_id_id;
