-- Hand-written: contact visibility by role and delegation (issue 8). The request transaction
-- carries app.user_id (uuid text, '' for company-level credentials) and app.visibility ('all' |
-- 'own_and_delegated'), pinned with set_config(..., true) beside app.company_id (tenancy/).
-- RESTRICTIVE policies narrow user-scoped tables on top of company_isolation; ent/rule filters
-- the same way (rule.FilterVisibleOwner, rule.FilterVisibleContact, rule.FilterVisibleEvent).

-- +goose Up
SELECT app_enable_tenant_rls('delegations');
CREATE UNIQUE INDEX tenant_delegations_company_id_id ON delegations (company_id, id);
ALTER TABLE delegations ADD CONSTRAINT tenant_delegations_delegator
  FOREIGN KEY (company_id, delegator_id) REFERENCES users (company_id, id) ON DELETE CASCADE;
ALTER TABLE delegations ADD CONSTRAINT tenant_delegations_delegate
  FOREIGN KEY (company_id, delegate_id) REFERENCES users (company_id, id) ON DELETE CASCADE;
ALTER TABLE delegations ADD CONSTRAINT tenant_delegations_not_self CHECK (delegator_id <> delegate_id);
-- The contacts list of an agent filters by owner: the index its visibility predicate uses.
CREATE INDEX tenant_contacts_company_owner ON contacts (company_id, owner_id);
CREATE INDEX tenant_leads_company_owner ON leads (company_id, owner_id);

-- app_visible_owner: may the pinned credential see a row owned by owner? True for visibility
-- 'all', and for company-level work (neither setting given: operator, background jobs pinned
-- to a company only); else when owner is the acting user or delegated it a valid delegation.
-- A NULL owner is visible to 'all' only. A user without a visibility counts as
-- own_and_delegated, never as all.
-- +goose StatementBegin
CREATE FUNCTION app_visible_owner(owner uuid) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  vis text := coalesce(current_setting('app.visibility', true), '');
  usr text := coalesce(current_setting('app.user_id', true), '');
BEGIN
  IF vis = 'all' OR (vis = '' AND usr = '') THEN
    RETURN true;
  END IF;
  IF owner IS NULL OR usr = '' THEN
    RETURN false;
  END IF;
  IF owner = usr::uuid THEN
    RETURN true;
  END IF;
  RETURN EXISTS (SELECT 1 FROM public.delegations d
    WHERE d.delegator_id = owner AND d.delegate_id = usr::uuid
      AND (d.valid_until IS NULL OR d.valid_until > now()));
END $$;
-- +goose StatementEnd

-- app_contact_visible: is the contact visible (its owner, by app_visible_owner)? For
-- visibility 'all' true without a lookup; otherwise false also for a contact that does not
-- exist (any more).
-- +goose StatementBegin
CREATE FUNCTION app_contact_visible(contact uuid) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF public.app_visible_owner(NULL) THEN -- true only when everything is visible
    RETURN true;
  END IF;
  RETURN EXISTS (SELECT 1 FROM public.contacts c WHERE c.id = contact AND public.app_visible_owner(c.owner_id));
END $$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION app_visible_owner(uuid), app_contact_visible(uuid) TO brokerdesk_app, brokerdesk_operator;

-- app_restrict_visibility adds the RESTRICTIVE policies of a user-scoped table: name for SELECT,
-- name_update (the old row must be visible; the new one need not be: giving a contact to a
-- colleague is allowed) and name_delete. INSERT is not restricted: a row may be created for
-- another owner. Tables that belong to a contact call it with
-- 'contact_id IS NULL OR app_contact_visible(contact_id)'.
-- +goose StatementBegin
CREATE FUNCTION app_restrict_visibility(tbl regclass, name text, expr text) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, public
AS $$
BEGIN
  EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE FOR SELECT USING (%s)', name, tbl, expr);
  EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE FOR UPDATE USING (%s) WITH CHECK (true)', name || '_update', tbl, expr);
  EXECUTE format('CREATE POLICY %I ON %s AS RESTRICTIVE FOR DELETE USING (%s)', name || '_delete', tbl, expr);
END $$;
-- +goose StatementEnd

SELECT app_restrict_visibility('contacts', 'contact_visibility', 'app_visible_owner(owner_id)');
SELECT app_restrict_visibility('contact_phones', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('lead_attachments', 'contact_visibility', 'contact_id IS NULL OR app_contact_visible(contact_id)');
SELECT app_restrict_visibility('leads', 'lead_visibility', 'app_visible_owner(owner_id)');
-- An event about a contact or lead (user_scoped) is visible when its owner at the time or its
-- contact (while it exists) is; a contact.deleted keeps owner_id, so the owner, its delegates
-- and 'all' see it. Other events: everyone with the type's scope.
SELECT app_restrict_visibility('events', 'event_visibility',
  'NOT user_scoped OR app_visible_owner(owner_id) OR (contact_id IS NOT NULL AND app_contact_visible(contact_id))');

-- The commit trigger numbers every event of the transaction, visible to the writer or not (an
-- agent who gave a contact away still records contact.updated): it lifts the visibility for
-- its one UPDATE and puts it back.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_assign_seq() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  s bigint;
  vis text := current_setting('app.visibility', true);
BEGIN
  INSERT INTO event_counters (id, company_id, last_seq) VALUES (gen_random_uuid(), NEW.company_id, 0)
    ON CONFLICT (company_id) DO NOTHING;
  UPDATE event_counters SET last_seq = last_seq + 1 WHERE company_id = NEW.company_id RETURNING last_seq INTO s;
  PERFORM set_config('app.visibility', 'all', true);
  UPDATE events SET seq = s WHERE id = NEW.id;
  PERFORM set_config('app.visibility', coalesce(vis, ''), true);
  RETURN NULL;
END $$;
-- +goose StatementEnd

-- Events written before: what they concern, from their data (the Contact and Lead resources).
SET LOCAL ROLE brokerdesk_operator;
UPDATE events SET user_scoped = true, contact_id = (data->>'id')::uuid,
  owner_id = nullif(data->>'ownerId', '')::uuid
WHERE type LIKE 'contact.%';
UPDATE events SET user_scoped = true, owner_id = nullif(data->>'ownerId', '')::uuid,
  contact_id = nullif(data->>'contactId', '')::uuid
WHERE type LIKE 'lead.%';
RESET ROLE;

-- +goose Down
SELECT 1;
