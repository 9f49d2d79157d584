-- The credential lookups also return what GET /me shows of the company and the user (the
-- company's name; the user's e-mail and names), so /me answers from the lookup's row without
-- reading the company and the user again (issue 7 §5: one round trip less). The rows are the
-- ones the lookups join anyway; the new columns are the last ones, the old ones keep their
-- order. auth_token by primary keys for a live client (see 20261125021000); a test client's
-- token with a user finds the user's twin by the synthetic e-mail sandbox twins have had since
-- issue 7 §4 (the e-mail join found none: such tokens were refused). RETURNS TABLE changes,
-- so DROP and CREATE (one transaction; owner and grants again, CREATE on public only for the
-- OWNER TO, as 20261124010000_hardening.sql says).

-- +goose Up
DROP FUNCTION public.auth_credential(bytea);
-- +goose StatementBegin
CREATE FUNCTION public.auth_credential(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text,
  company_name text, user_email text, user_first_name text, user_last_name text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT k.id, k.prefix::text, k.hash, k.kind::text, k.env::text, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role::text,
         c.name::text, u.email::text, u.first_name::text, u.last_name::text
  FROM public.api_keys k
  JOIN public.companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.hash = p_hash AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active');
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.auth_credential(bytea) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_credential(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.auth_credential(bytea) TO brokerdesk_app;

DROP FUNCTION public.auth_token(bytea);
-- +goose StatementBegin
CREATE FUNCTION public.auth_token(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text, client_id uuid, client_name text,
  company_name text, user_email text, user_first_name text, user_last_name text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- A live client: token, client, company and user by primary key.
  RETURN QUERY
  SELECT t.id, ''::text, t.signature_hash, 'oauth'::text, cl.env::text, t.granted_scopes, '[]'::jsonb,
         c.id, c.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text,
         c.name::text, u.email::text, u.first_name::text, u.last_name::text
  FROM public.oauth_tokens t
  JOIN public.oauth_clients cl ON cl.id = t.client_id AND cl.status = 'active' AND cl.env = 'live'
  JOIN public.companies c ON c.id = t.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = t.company_id AND u.id = t.user_id
  WHERE t.signature_hash = p_hash AND t.kind = 'access_token' AND t.active AND t.expires_at > now()
    AND (t.user_id IS NULL OR u.status = 'active');
  IF FOUND THEN
    RETURN;
  END IF;
  -- A test client: the sandbox twin (unique live_company_id) and the user's twin there, found
  -- as app/operator finds it: the synthetic e-mail of operator.SandboxEmail (twins since
  -- issue 7 §4), else the live user's e-mail (older twins); the synthetic one first.
  RETURN QUERY
  SELECT t.id, ''::text, t.signature_hash, 'oauth'::text, cl.env::text, t.granted_scopes, '[]'::jsonb,
         c.id, lc.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text,
         c.name::text, u.email::text, u.first_name::text, u.last_name::text
  FROM public.oauth_tokens t
  JOIN public.oauth_clients cl ON cl.id = t.client_id AND cl.status = 'active' AND cl.env = 'test'
  JOIN public.companies lc ON lc.id = t.company_id AND lc.status = 'active'
  JOIN public.companies c ON c.live_company_id = lc.id AND c.status = 'active'
  LEFT JOIN public.users lu ON lu.company_id = lc.id AND lu.id = t.user_id
  LEFT JOIN LATERAL (
    SELECT tu.id, tu.role, tu.status, tu.email, tu.first_name, tu.last_name FROM public.users tu
    WHERE tu.company_id = c.id AND tu.email IN ('sandbox+' || lu.id::text || '@example.invalid', lu.email)
    ORDER BY tu.email = lu.email LIMIT 1) u ON true
  WHERE t.signature_hash = p_hash AND t.kind = 'access_token' AND t.active AND t.expires_at > now()
    AND (t.user_id IS NULL OR (lu.status = 'active' AND u.status = 'active'));
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.auth_token(bytea) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.auth_token(bytea) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION public.auth_token(bytea);
-- +goose StatementBegin
CREATE FUNCTION public.auth_token(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text, client_id uuid, client_name text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT t.id, ''::text, t.signature_hash, 'oauth'::text, cl.env::text, t.granted_scopes, '[]'::jsonb,
         c.id, c.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text
  FROM public.oauth_tokens t
  JOIN public.oauth_clients cl ON cl.id = t.client_id AND cl.status = 'active' AND cl.env = 'live'
  JOIN public.companies c ON c.id = t.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = t.company_id AND u.id = t.user_id
  WHERE t.signature_hash = p_hash AND t.kind = 'access_token' AND t.active AND t.expires_at > now()
    AND (t.user_id IS NULL OR u.status = 'active');
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
  SELECT t.id, ''::text, t.signature_hash, 'oauth'::text, cl.env::text, t.granted_scopes, '[]'::jsonb,
         c.id, lc.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text
  FROM public.oauth_tokens t
  JOIN public.oauth_clients cl ON cl.id = t.client_id AND cl.status = 'active' AND cl.env = 'test'
  JOIN public.companies lc ON lc.id = t.company_id AND lc.status = 'active'
  JOIN public.companies c ON c.live_company_id = lc.id AND c.status = 'active'
  LEFT JOIN public.users lu ON lu.company_id = lc.id AND lu.id = t.user_id
  LEFT JOIN public.users u ON u.company_id = c.id AND u.email = lu.email
  WHERE t.signature_hash = p_hash AND t.kind = 'access_token' AND t.active AND t.expires_at > now()
    AND (t.user_id IS NULL OR (lu.status = 'active' AND u.status = 'active'));
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.auth_token(bytea) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_token(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.auth_token(bytea) TO brokerdesk_app;

DROP FUNCTION public.auth_credential(bytea);
-- +goose StatementBegin
CREATE FUNCTION public.auth_credential(p_hash bytea) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT k.id, k.prefix::text, k.hash, k.kind::text, k.env::text, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role::text
  FROM public.api_keys k
  JOIN public.companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.hash = p_hash AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active');
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.auth_credential(bytea) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_credential(bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.auth_credential(bytea) TO brokerdesk_app;
