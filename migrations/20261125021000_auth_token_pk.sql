-- auth_token by primary keys (issue 9): the old query joined the acting company with
-- `(live AND c.id = lc.id) OR (test AND c.live_company_id = lc.id)` and a second users row by
-- e-mail for every token, five relations where a key's lookup needs three. A live client's
-- token acts in its own company as its own user: the token, its client, the company and the user
-- by primary key. Only a test client's token (none found by the first query) takes the second
-- query: the sandbox twin by its unique live_company_id and the twin's user of the same e-mail.
-- Same columns, same refusals (inactive user, company or client, revoked or expired token).

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION public.auth_token(p_hash bytea) RETURNS TABLE (
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

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION public.auth_token(p_hash bytea) RETURNS TABLE (
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
