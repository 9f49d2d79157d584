-- Hand-written: row-level security and composite keys of the webhook tables, the commit-time
-- notification that wakes the dispatcher, and the SECURITY DEFINER functions the delivery
-- worker uses (the credential of an endpoint, the companies with undispatched events, the purge
-- of the delivery log). River's own tables live in the schema "river", outside tenant RLS; they
-- are created by river's migrator from migrations.Up (see migrations/river.go).

-- +goose Up
SELECT app_enable_tenant_rls('webhook_endpoints');
SELECT app_enable_tenant_rls('webhook_deliveries');
SELECT app_enable_tenant_rls('webhook_cursors');
-- Delivery log rows go with their endpoint (cascade) or with the purge; cursors never go.
REVOKE DELETE ON webhook_deliveries, webhook_cursors FROM brokerdesk_app;

-- Composite keys: an endpoint's credential and a delivery's endpoint belong to the same company.
-- Deleting a key keeps its endpoints (credential_id becomes NULL, deliveries stop).
CREATE UNIQUE INDEX tenant_api_keys_company_id_id ON api_keys (company_id, id);
CREATE UNIQUE INDEX tenant_webhook_endpoints_company_id_id ON webhook_endpoints (company_id, id);
ALTER TABLE webhook_endpoints ADD CONSTRAINT tenant_webhook_endpoints_credential
  FOREIGN KEY (company_id, credential_id) REFERENCES api_keys (company_id, id) ON DELETE SET NULL (credential_id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT tenant_webhook_deliveries_endpoint
  FOREIGN KEY (company_id, endpoint_id) REFERENCES webhook_endpoints (company_id, id) ON DELETE CASCADE;

-- At commit, tell the dispatchers (LISTEN brokerdesk_webhooks in every serve process) which
-- companies have new events, but only companies with an enabled endpoint: NOTIFY serialises
-- committing transactions on a global lock, which companies without webhooks should not pay.
-- NOTIFY is transactional: a rolled-back event wakes nobody, and the notification arrives after
-- the deferred seq trigger has numbered the event.
-- +goose StatementBegin
CREATE FUNCTION events_notify_webhooks() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM pg_catalog.pg_notify('brokerdesk_webhooks', c.company_id::text)
  FROM (SELECT DISTINCT n.company_id FROM new_events n) c
  WHERE EXISTS (SELECT FROM public.webhook_endpoints w WHERE w.company_id = c.company_id AND w.enabled);
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER events_notify_webhooks AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_notify_webhooks();

-- The credential an endpoint delivers as, by id, within the pinned company only; no row when
-- the key is deactivated or deleted, its user inactive or its company inactive (as
-- auth_credential decides for requests). Owned by brokerdesk_auth, whose policy reads keys.
-- +goose StatementBegin
CREATE FUNCTION webhook_credential(p_key_id uuid) RETURNS TABLE (
  key_id uuid, key_prefix text, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT k.id, k.prefix::text, k.kind::text, k.env::text, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role::text
  FROM public.api_keys k
  JOIN public.companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.id = p_key_id AND k.company_id = public.app_current_company() AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active');
END $$;
-- +goose StatementEnd
ALTER FUNCTION webhook_credential(uuid) OWNER TO brokerdesk_auth;
REVOKE ALL ON FUNCTION webhook_credential(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_credential(uuid) TO brokerdesk_app;

-- Companies whose events are not all dispatched yet (the periodic sweep behind the
-- notifications). Returns ids only; the dispatcher pins a transaction to each.
-- +goose StatementBegin
CREATE FUNCTION webhook_pending_companies() RETURNS SETOF uuid
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT DISTINCT w.company_id FROM public.webhook_endpoints w
  JOIN public.event_counters ec ON ec.company_id = w.company_id
  LEFT JOIN public.webhook_cursors cur ON cur.company_id = w.company_id
  WHERE w.enabled AND ec.last_seq > coalesce(cur.dispatched_seq, 0);
END $$;
-- +goose StatementEnd
ALTER FUNCTION webhook_pending_companies() OWNER TO brokerdesk_operator;
REVOKE ALL ON FUNCTION webhook_pending_companies() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_pending_companies() TO brokerdesk_app;

-- The delivery log is kept 30 days (spec: Limits). No parameters: a caller cannot purge younger
-- rows.
-- +goose StatementBegin
CREATE FUNCTION webhook_purge() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  n bigint;
BEGIN
  DELETE FROM public.webhook_deliveries WHERE created_at < now() - interval '30 days';
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
-- +goose StatementEnd
ALTER FUNCTION webhook_purge() OWNER TO brokerdesk_operator;
REVOKE ALL ON FUNCTION webhook_purge() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_purge() TO brokerdesk_app;

-- +goose Down
DROP FUNCTION webhook_purge();
DROP FUNCTION webhook_pending_companies();
DROP FUNCTION webhook_credential(uuid);
DROP TRIGGER events_notify_webhooks ON events;
DROP FUNCTION events_notify_webhooks();
ALTER TABLE webhook_deliveries DROP CONSTRAINT tenant_webhook_deliveries_endpoint;
ALTER TABLE webhook_endpoints DROP CONSTRAINT tenant_webhook_endpoints_credential;
DROP INDEX tenant_webhook_endpoints_company_id_id;
DROP INDEX tenant_api_keys_company_id_id;
