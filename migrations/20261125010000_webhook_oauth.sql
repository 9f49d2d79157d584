-- Hand-written: a webhook endpoint remembers an OAuth credential as clearly as a key (issue 10
-- meets issue 9): oauth_client_id, and oauth_user_id for a user's grant (none: the
-- company-bound client's client credentials). webhook_oauth_credential resolves it at delivery
-- like webhook_credential a key (docs/decisions.md, "Webhook endpoints of OAuth clients").

-- +goose Up
ALTER TABLE "webhook_endpoints" ADD COLUMN "oauth_client_id" uuid NULL, ADD COLUMN "oauth_user_id" uuid NULL;
-- Deleting the client keeps the endpoint without credential (deliveries stop). Users are set
-- inactive, never deleted, while an endpoint acts for them: a NULL user would turn a user's
-- grant into a company-level credential.
ALTER TABLE webhook_endpoints ADD CONSTRAINT tenant_webhook_endpoints_oauth_client
  FOREIGN KEY (oauth_client_id) REFERENCES oauth_clients (id) ON DELETE SET NULL;
ALTER TABLE webhook_endpoints ADD CONSTRAINT tenant_webhook_endpoints_oauth_user
  FOREIGN KEY (company_id, oauth_user_id) REFERENCES users (company_id, id);

-- The OAuth credential an endpoint delivers as, with webhook_credential's columns, for the
-- pinned company only (a test client's endpoint lives in the sandbox twin, its user is the
-- twin's user of the same e-mail, as auth_token maps them). No row when the client is disabled
-- or deleted, the company inactive, and:
--  - p_user given (a user's grant): the user (and its live twin) inactive, or no grant of the
--    client for that user still live (every token revoked or expired: revocation, refresh
--    reuse). Scopes: what the live grants were granted.
--  - no user (client credentials): the client not bound to this company. Scopes: the client's,
--    which it may ask a token for at any time.
-- +goose StatementBegin
CREATE FUNCTION webhook_oauth_credential(p_client uuid, p_user uuid) RETURNS TABLE (
  key_id uuid, key_prefix text, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text, client_id uuid, client_name text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT NULL::uuid, ''::text, 'oauth'::text, cl.env::text,
         CASE WHEN p_user IS NULL THEN cl.scopes ELSE (
           SELECT coalesce(jsonb_agg(DISTINCT s.scope), '[]'::jsonb)
           FROM public.oauth_tokens t, jsonb_array_elements_text(t.granted_scopes) AS s(scope)
           WHERE t.client_id = cl.id AND t.company_id = lc.id AND t.user_id = lu.id
             AND t.kind IN ('access_token', 'refresh_token') AND t.active AND t.expires_at > now()) END,
         '[]'::jsonb, c.id, lc.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text
  FROM public.oauth_clients cl
  JOIN public.companies c ON c.id = public.app_current_company() AND c.status = 'active'
  JOIN public.companies lc ON lc.id = coalesce(c.live_company_id, c.id) AND lc.status = 'active'
  LEFT JOIN public.users u ON u.company_id = c.id AND u.id = p_user
  LEFT JOIN public.users lu ON lu.company_id = lc.id AND lu.email = u.email
  WHERE cl.id = p_client AND cl.status = 'active'
    AND ((cl.env = 'live' AND NOT c.sandbox) OR (cl.env = 'test' AND c.sandbox))
    AND CASE WHEN p_user IS NULL THEN cl.company_id = lc.id
      ELSE u.status = 'active' AND lu.status = 'active' AND EXISTS (
        SELECT FROM public.oauth_tokens t
        WHERE t.client_id = cl.id AND t.company_id = lc.id AND t.user_id = lu.id
          AND t.kind IN ('access_token', 'refresh_token') AND t.active AND t.expires_at > now()) END;
END $$;
-- +goose StatementEnd
ALTER FUNCTION webhook_oauth_credential(uuid, uuid) OWNER TO brokerdesk_auth;
REVOKE ALL ON FUNCTION webhook_oauth_credential(uuid, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION webhook_oauth_credential(uuid, uuid) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION webhook_oauth_credential(uuid, uuid);
ALTER TABLE webhook_endpoints DROP CONSTRAINT tenant_webhook_endpoints_oauth_user;
ALTER TABLE webhook_endpoints DROP CONSTRAINT tenant_webhook_endpoints_oauth_client;
ALTER TABLE "webhook_endpoints" DROP COLUMN "oauth_user_id", DROP COLUMN "oauth_client_id";
