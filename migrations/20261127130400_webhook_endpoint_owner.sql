-- Hand-written (issue 20 §5): a webhook endpoint belongs to the credential it delivers as (the
-- one that created it or last changed its url: credential_id, or oauth_client_id and
-- oauth_user_id). Only that credential and the company's admin credentials see or change it
-- (docs/decisions/webhooks-and-events.md, "Webhook endpoints belong to their credential").
--
-- Two layers. The ent rule (rule.FilterOwnCredential) decides by credential. The database
-- knows the pinned user (app.user_id), not the credential, so the RESTRICTIVE policy
-- endpoint_owner decides the part it can, by credential_user_id (the user the credential acts
-- for, NULL for company-level keys and client credentials):
--   - no user pinned (company-level credentials, background work): every endpoint;
--   - a user pinned: the endpoints of that user's credentials, or every endpoint when the user
--     is an admin (policy: only role admin may hold admin:write, TestPolicy_IsAdmin).
-- So an agent's or a partner's (user-bound) session cannot read another credential's endpoint
-- URL even if the ent rule were bypassed; company-level keys without admin:write rely on the
-- ent rule alone.
--
-- Existing endpoints keep the credential they deliver as: that is their owner. Endpoints whose
-- key or client was deleted (no credential) are visible to admins only.

-- +goose Up
ALTER TABLE webhook_endpoints ADD CONSTRAINT tenant_webhook_endpoints_credential_user
  FOREIGN KEY (company_id, credential_user_id) REFERENCES users (company_id, id);

SET LOCAL ROLE brokerdesk_operator;
UPDATE webhook_endpoints e SET credential_user_id = coalesce(e.oauth_user_id,
  (SELECT k.user_id FROM api_keys k WHERE k.company_id = e.company_id AND k.id = e.credential_id));
RESET ROLE;

-- app_webhook_endpoint_visible: may the pinned session see an endpoint whose credential acts
-- for p_user? Reads only the pipeline's app.user_id and the pinned company's users.
-- +goose StatementBegin
CREATE FUNCTION public.app_webhook_endpoint_visible(p_user uuid) RETURNS boolean
LANGUAGE plpgsql STABLE SECURITY INVOKER PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  usr text := coalesce(current_setting('app.user_id', true), '');
BEGIN
  IF usr = '' THEN
    RETURN true;
  END IF;
  IF p_user IS NOT NULL AND p_user = usr::uuid THEN
    RETURN true;
  END IF;
  RETURN EXISTS (SELECT 1 FROM public.users u WHERE u.id = usr::uuid AND u.role = 'admin');
END $$;
-- +goose StatementEnd
GRANT EXECUTE ON FUNCTION public.app_webhook_endpoint_visible(uuid) TO brokerdesk_app;
-- Every command: reading, and writing only rows the session may see and leaves visible to itself.
CREATE POLICY endpoint_owner ON webhook_endpoints AS RESTRICTIVE TO brokerdesk_app
  USING (public.app_webhook_endpoint_visible(credential_user_id))
  WITH CHECK (public.app_webhook_endpoint_visible(credential_user_id));

-- webhook_endpoint_count: the pinned company's endpoints, all of them, for the limit of 20 per
-- company (409 endpoint_limit) that a credential seeing only its own could not count. A number,
-- nothing else.
-- +goose StatementBegin
CREATE FUNCTION public.webhook_endpoint_count() RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT count(*) FROM public.webhook_endpoints WHERE company_id = public.app_current_company() $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_operator;
ALTER FUNCTION public.webhook_endpoint_count() OWNER TO brokerdesk_operator;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_operator;
REVOKE ALL ON FUNCTION public.webhook_endpoint_count() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.webhook_endpoint_count() TO brokerdesk_app;

-- +goose Down
DROP FUNCTION public.webhook_endpoint_count();
DROP POLICY endpoint_owner ON webhook_endpoints;
DROP FUNCTION public.app_webhook_endpoint_visible(uuid);
ALTER TABLE webhook_endpoints DROP CONSTRAINT tenant_webhook_endpoints_credential_user;
