-- Hand-written (issue 23): row-level security, composite tenant keys and visibility of the
-- customer portal's tables, and the role a customer's portal request runs as
-- (docs/decisions/portal.md). Accesses, tokens, sessions and change requests are as visible as
-- their contact (VisibleByContact in ent/schema/portal.go says the same).
--
-- A portal request (tenancy.WithPortal) takes the role brokerdesk_portal and pins
-- app.visibility 'portal:<contact id>': app_visible_all() is false and no user is
-- set, so every policy written with app_visible_owner or app_contact_visible admits nothing but
-- the contact itself (the contacts policy below) and what hangs off it. The role's grants keep
-- it away from every table a customer has no business with (keys, users, webhooks, leads,
-- tasks, e-mail): a bug in the portal's code reaches neither another contact's rows nor the
-- company's configuration.

-- +goose Up
SELECT app_enable_tenant_rls('portal_accesses');
SELECT app_enable_tenant_rls('portal_tokens');
SELECT app_enable_tenant_rls('portal_sessions');
SELECT app_enable_tenant_rls('portal_change_requests');

CREATE UNIQUE INDEX tenant_portal_accesses_company_id_id_contact ON portal_accesses (company_id, id, contact_id);
ALTER TABLE portal_accesses ADD CONSTRAINT tenant_portal_accesses_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE portal_accesses ADD CONSTRAINT tenant_portal_accesses_inviter
  FOREIGN KEY (company_id, invited_by) REFERENCES users (company_id, id) ON DELETE SET NULL (invited_by);
-- A token's and a session's contact is their access's: the key names both.
ALTER TABLE portal_tokens ADD CONSTRAINT tenant_portal_tokens_access
  FOREIGN KEY (company_id, access_id, contact_id) REFERENCES portal_accesses (company_id, id, contact_id) ON DELETE CASCADE;
ALTER TABLE portal_sessions ADD CONSTRAINT tenant_portal_sessions_access
  FOREIGN KEY (company_id, access_id, contact_id) REFERENCES portal_accesses (company_id, id, contact_id) ON DELETE CASCADE;
ALTER TABLE portal_change_requests ADD CONSTRAINT tenant_portal_change_requests_contact
  FOREIGN KEY (company_id, contact_id) REFERENCES contacts (company_id, id) ON DELETE CASCADE;
ALTER TABLE portal_change_requests ADD CONSTRAINT tenant_portal_change_requests_access
  FOREIGN KEY (company_id, access_id, contact_id) REFERENCES portal_accesses (company_id, id, contact_id)
  ON DELETE SET NULL (access_id);
ALTER TABLE portal_change_requests ADD CONSTRAINT tenant_portal_change_requests_decider
  FOREIGN KEY (company_id, decided_by) REFERENCES users (company_id, id) ON DELETE SET NULL (decided_by);
-- A decided request carries its decision, a withdrawn one its time.
ALTER TABLE portal_change_requests ADD CONSTRAINT tenant_portal_change_requests_decided
  CHECK ((status IN ('approved', 'rejected')) = (decided_at IS NOT NULL)
     AND (status = 'withdrawn') = (withdrawn_at IS NOT NULL));
-- One pending change request per contact and kind (the customer withdraws it to ask again):
-- two submissions at once cannot both pass the service's check.
CREATE UNIQUE INDEX tenant_portal_change_requests_pending ON portal_change_requests (company_id, contact_id, kind)
  WHERE status = 'pending';
-- One sign-in name per company among the accesses not revoked.
CREATE UNIQUE INDEX tenant_portal_accesses_login ON portal_accesses (company_id, email) WHERE status <> 'revoked';

SELECT app_restrict_visibility('portal_accesses', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('portal_tokens', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('portal_sessions', 'contact_visibility', 'app_contact_visible(contact_id)');
SELECT app_restrict_visibility('portal_change_requests', 'contact_visibility', 'app_contact_visible(contact_id)');

-- app_portal_contact: the contact a portal request is pinned to, which the pinned pipeline
-- writes into app.visibility itself ('portal:<contact id>'): no other setting opens a policy
-- (test/schema TestSchema_PoliciesReadOnlyPinnedSettings), and app_visible_all() never counts
-- such a visibility as seeing all. NULL for every other kind of work.
-- +goose StatementBegin
CREATE FUNCTION app_portal_contact() RETURNS uuid
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  vis text := coalesce(current_setting('app.visibility', true), '');
BEGIN
  IF vis NOT LIKE 'portal:%' THEN
    RETURN NULL;
  END IF;
  RETURN substr(vis, 8)::uuid;
END $$;
-- +goose StatementEnd

-- The contacts policies admit the portal's own contact as well; everything written with
-- app_contact_visible follows from it.
-- +goose StatementBegin
DO $$
DECLARE
  p record;
BEGIN
  FOR p IN SELECT pol.polname, pg_get_expr(pol.polqual, pol.polrelid) AS qual
    FROM pg_policy pol WHERE pol.polrelid = 'contacts'::regclass AND pol.polname LIKE 'contact_visibility%'
  LOOP
    EXECUTE format('ALTER POLICY %I ON contacts USING ((%s) OR contacts.id = (SELECT public.app_portal_contact()))',
      p.polname, p.qual);
  END LOOP;
END $$;
-- +goose StatementEnd

-- The portal role: what a customer reads and the portal's own writes.
GRANT SELECT ON contacts, contact_phones, contracts, documents, signature_requests, signature_signers TO brokerdesk_portal;
GRANT SELECT ON insurers TO brokerdesk_portal;
-- The portal shows the documents released to the customer only (released_at), the database too.
CREATE POLICY portal_released_documents ON documents AS RESTRICTIVE FOR SELECT TO brokerdesk_portal
  USING (released_at IS NOT NULL);
GRANT SELECT (id, name, address, links, status) ON companies TO brokerdesk_portal;
GRANT SELECT, UPDATE ON portal_accesses TO brokerdesk_portal;
GRANT SELECT, UPDATE, DELETE ON portal_sessions TO brokerdesk_portal;
GRANT SELECT, INSERT, UPDATE ON portal_change_requests TO brokerdesk_portal;
-- Events of its own contact (portal_change_request.created, .withdrawn), numbered by the
-- commit trigger (events_assign_seq), which reads and writes the counter.
GRANT SELECT, INSERT, UPDATE ON events, event_counters TO brokerdesk_portal;
CREATE POLICY portal_own_events ON events AS RESTRICTIVE TO brokerdesk_portal
  USING (contact_id = (SELECT public.app_portal_contact())) WITH CHECK (contact_id = (SELECT public.app_portal_contact()));

-- events_assign_seq lifts the visibility to 'all' for its UPDATE of the event it numbers; a
-- portal transaction keeps its 'portal:<id>', under which its own contact's event is visible
-- (portal_own_events admits nothing under 'all', so the lift would leave the event unnumbered
-- and out of the feed).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_assign_seq() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  s bigint;
  vis text := current_setting('app.visibility', true);
  portal boolean := current_user = 'brokerdesk_portal';
BEGIN
  INSERT INTO event_counters (id, company_id, last_seq) VALUES (gen_random_uuid(), NEW.company_id, 0)
    ON CONFLICT (company_id) DO NOTHING;
  UPDATE event_counters SET last_seq = last_seq + 1 WHERE company_id = NEW.company_id RETURNING last_seq INTO s;
  IF NOT portal THEN
    PERFORM set_config('app.visibility', 'all', true);
  END IF;
  UPDATE events SET seq = s WHERE id = NEW.id;
  IF NOT portal THEN
    PERFORM set_config('app.visibility', coalesce(vis, ''), true);
  END IF;
  RETURN NULL;
END $$;
-- +goose StatementEnd

-- events_notify_webhooks reads the company's endpoints, which the portal role may not: for its
-- events the company is notified unconditionally (the dispatcher finds nothing to do when no
-- endpoint is enabled).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_notify_webhooks() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF current_user = 'brokerdesk_portal' THEN
    PERFORM pg_catalog.pg_notify('brokerdesk_webhooks', c.company_id::text)
    FROM (SELECT DISTINCT n.company_id FROM new_events n) c;
    RETURN NULL;
  END IF;
  PERFORM pg_catalog.pg_notify('brokerdesk_webhooks', c.company_id::text)
  FROM (SELECT DISTINCT n.company_id FROM new_events n) c
  WHERE EXISTS (SELECT FROM public.webhook_endpoints w WHERE w.company_id = c.company_id AND w.enabled);
  RETURN NULL;
END $$;
-- +goose StatementEnd

-- What request and job work may do (test/schema appPrivileges says why for each).
-- An access is invited, activated and revoked (its status), never deleted: it goes with its
-- contact. Tokens are written when an invitation or reset is mailed and marked used, and go
-- with their access.
REVOKE DELETE ON portal_accesses, portal_tokens FROM brokerdesk_app;
-- A change request is a record of what the customer asked and what the broker decided: it
-- goes with its contact only.
REVOKE DELETE ON portal_change_requests FROM brokerdesk_app;

-- +goose Down
GRANT DELETE ON portal_change_requests TO brokerdesk_app;
GRANT DELETE ON portal_accesses, portal_tokens TO brokerdesk_app;
SELECT 1;
