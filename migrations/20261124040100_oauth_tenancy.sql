-- Hand-written: the OAuth tables' row-level security, the token lookup for the auth middleware
-- and the login lookup of the authorization server (docs/decisions.md, "OAuth 2.0").
-- The OAuth tables carry company_id and get company_isolation like tenant tables; the
-- authorization server works before any company is known and sets app.oauth = 'server' in its
-- own transactions (tenancy.WithOAuthServer), which the oauth_server policy admits.

-- +goose Up
SELECT app_enable_tenant_rls('oauth_clients');
SELECT app_enable_tenant_rls('oauth_tokens');
SELECT app_enable_tenant_rls('oauth_consents');
CREATE POLICY oauth_server ON oauth_clients FOR SELECT TO brokerdesk_app
  USING (current_setting('app.oauth', true) = 'server');
CREATE POLICY oauth_server ON oauth_tokens TO brokerdesk_app
  USING (current_setting('app.oauth', true) = 'server') WITH CHECK (current_setting('app.oauth', true) = 'server');
CREATE POLICY oauth_server ON oauth_consents TO brokerdesk_app
  USING (current_setting('app.oauth', true) = 'server') WITH CHECK (current_setting('app.oauth', true) = 'server');
-- Clients are registered by the operator only.
REVOKE INSERT, UPDATE, DELETE ON oauth_clients FROM brokerdesk_app;

ALTER TABLE oauth_tokens ADD CONSTRAINT tenant_oauth_tokens_client
  FOREIGN KEY (client_id) REFERENCES oauth_clients (id) ON DELETE CASCADE;
ALTER TABLE oauth_tokens ADD CONSTRAINT tenant_oauth_tokens_company
  FOREIGN KEY (company_id) REFERENCES companies (id) ON DELETE CASCADE;
ALTER TABLE oauth_tokens ADD CONSTRAINT tenant_oauth_tokens_user
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE;
ALTER TABLE oauth_consents ADD CONSTRAINT tenant_oauth_consents_client
  FOREIGN KEY (client_id) REFERENCES oauth_clients (id) ON DELETE CASCADE;
ALTER TABLE oauth_consents ADD CONSTRAINT tenant_oauth_consents_user
  FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE;
ALTER TABLE oauth_clients ADD CONSTRAINT tenant_oauth_clients_company
  FOREIGN KEY (company_id) REFERENCES companies (id) ON DELETE CASCADE;

GRANT SELECT ON oauth_clients, oauth_tokens TO brokerdesk_auth;
CREATE POLICY auth_lookup ON oauth_clients FOR SELECT TO brokerdesk_auth USING (true);
CREATE POLICY auth_lookup ON oauth_tokens FOR SELECT TO brokerdesk_auth USING (true);

-- auth_token resolves an OAuth access token (the SHA-256 of its signature) like auth_credential
-- a key, with the same columns plus the client: the company the request is pinned to (the
-- sandbox twin for a test client, and there the user of the same e-mail), the user and role for
-- tokens issued through a user's consent. An inactive user, a disabled client, a revoked or
-- expired token gives no row.
-- +goose StatementBegin
CREATE FUNCTION auth_token(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text, client_id uuid, client_name text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT t.id, ''::text, t.signature_hash, 'oauth'::text, cl.env::text, t.granted_scopes, '[]'::jsonb,
         c.id, lc.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text
  FROM public.oauth_tokens t
  JOIN public.oauth_clients cl ON cl.id = t.client_id AND cl.status = 'active'
  JOIN public.companies lc ON lc.id = t.company_id AND lc.status = 'active'
  JOIN public.companies c ON c.status = 'active'
   AND ((cl.env = 'live' AND c.id = lc.id) OR (cl.env = 'test' AND c.live_company_id = lc.id))
  LEFT JOIN public.users lu ON lu.company_id = lc.id AND lu.id = t.user_id
  LEFT JOIN public.users u ON u.company_id = c.id AND u.email = lu.email
  WHERE t.signature_hash = p_hash AND t.kind = 'access_token' AND t.active AND t.expires_at > now()
    AND (t.user_id IS NULL OR (lu.status = 'active' AND u.status = 'active'));
END $$;
-- +goose StatementEnd
ALTER FUNCTION auth_token(bytea) OWNER TO brokerdesk_auth;
REVOKE ALL ON FUNCTION auth_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION auth_token(bytea) TO brokerdesk_app;

-- oauth_login_users finds the sign-in candidates of the authorization server's login form: the
-- users of live companies with this e-mail (p_email) or this id (p_user, a signed-in session),
-- with their password hash, status and company. Only the server's transactions may ask.
-- +goose StatementBegin
CREATE FUNCTION oauth_login_users(p_email text, p_user uuid) RETURNS TABLE (
  user_id uuid, company_id uuid, company_name text, email text, first_name text, last_name text,
  role text, active boolean, password_hash text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF current_setting('app.oauth', true) IS DISTINCT FROM 'server' THEN
    RETURN;
  END IF;
  RETURN QUERY
  SELECT u.id, c.id, c.name::text, u.email::text, u.first_name::text, u.last_name::text, u.role::text,
         u.status = 'active' AND c.status = 'active', u.password_hash::text
  FROM public.users u JOIN public.companies c ON c.id = u.company_id AND NOT c.sandbox
  WHERE (p_email IS NOT NULL AND u.email = p_email) OR (p_user IS NOT NULL AND u.id = p_user)
  ORDER BY u.created_at, u.id;
END $$;
-- +goose StatementEnd
ALTER FUNCTION oauth_login_users(text, uuid) OWNER TO brokerdesk_auth;
REVOKE ALL ON FUNCTION oauth_login_users(text, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION oauth_login_users(text, uuid) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION oauth_login_users(text, uuid);
DROP FUNCTION auth_token(bytea);
