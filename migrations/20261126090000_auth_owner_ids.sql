-- Hand-written: the credential lookups also return the owners whose contacts and leads a
-- restricted credential sees (issue 8, "Speed"): the acting user and every user whose delegation
-- to it has not expired, read in the lookup's own round trip. GET /contacts needed them as
-- values before it could build its statement (the planner cannot see into the policies'
-- per-statement array) and read them in a round trip of its own (contact_list_scope), 0.2-0.4 ms
-- of an agent's page 1 that an admin does not pay. NULL for credentials that see all
-- (p_see_all: the roles whose visibility is all, policy/ decides; no user: company-level).
--
-- Only the application uses the array, to name the owners in its statements; the row-level
-- security policies still read the delegations themselves in every statement
-- (app_visible_owner_ids()), so the two layers stay independent: a wrong array here can hide
-- contacts from a list, never show one. The delegations are read as brokerdesk_auth, the
-- lookups' owner, which reads them in every company for this (before the request is pinned)
-- and has no other use for them; the company is named in the condition.
--
-- RETURNS TABLE and the arguments change, so DROP and CREATE as 20261125021100 did.

-- +goose Up
GRANT SELECT ON delegations TO brokerdesk_auth;
CREATE POLICY auth_lookup ON delegations FOR SELECT TO brokerdesk_auth USING (true);

-- auth_owner_ids: the owners user (of role, in company) sees, NULL when it sees all. Not
-- executable by the app role: only the lookups call it (as their owner), so nobody can list
-- another company's delegations through it.
-- +goose StatementBegin
CREATE FUNCTION public.auth_owner_ids(p_company uuid, p_user uuid, p_role text, p_see_all text[]) RETURNS uuid[]
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE WHEN p_user IS NOT NULL AND p_role <> ALL (p_see_all) THEN
    array_prepend(p_user, ARRAY(SELECT d.delegator_id FROM public.delegations d
      WHERE d.company_id = p_company AND d.delegate_id = p_user
        AND (d.valid_until IS NULL OR d.valid_until > now())
      ORDER BY d.delegator_id))
  END
$$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.auth_owner_ids(uuid, uuid, text, text[]) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_owner_ids(uuid, uuid, text, text[]) FROM PUBLIC;

DROP FUNCTION public.auth_credential(bytea);
-- +goose StatementBegin
CREATE FUNCTION public.auth_credential(p_hash bytea, p_see_all text[]) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text,
  company_name text, user_email text, user_first_name text, user_last_name text,
  owner_ids uuid[])
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT k.id, k.prefix::text, k.hash, k.kind::text, k.env::text, k.scopes, k.allowed_domains,
         c.id, coalesce(c.live_company_id, c.id), c.sandbox, c.features,
         u.id, u.role::text,
         c.name::text, u.email::text, u.first_name::text, u.last_name::text,
         public.auth_owner_ids(c.id, u.id, u.role::text, p_see_all)
  FROM public.api_keys k
  JOIN public.companies c ON c.id = k.company_id AND c.status = 'active'
  LEFT JOIN public.users u ON u.company_id = k.company_id AND u.id = k.user_id
  WHERE k.hash = p_hash AND k.status = 'active'
    AND (k.user_id IS NULL OR u.status = 'active');
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.auth_credential(bytea, text[]) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_credential(bytea, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.auth_credential(bytea, text[]) TO brokerdesk_app;

DROP FUNCTION public.auth_token(bytea);
-- +goose StatementBegin
CREATE FUNCTION public.auth_token(p_hash bytea, p_see_all text[]) RETURNS TABLE (
  key_id uuid, key_prefix text, key_hash bytea, kind text, env text, scopes jsonb, allowed_domains jsonb,
  company_id uuid, live_company_id uuid, sandbox boolean, features jsonb,
  user_id uuid, user_role text, client_id uuid, client_name text,
  company_name text, user_email text, user_first_name text, user_last_name text,
  owner_ids uuid[])
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  -- A live client: token, client, company and user by primary key.
  RETURN QUERY
  SELECT t.id, ''::text, t.signature_hash, 'oauth'::text, cl.env::text, t.granted_scopes, '[]'::jsonb,
         c.id, c.id, c.sandbox, c.features,
         u.id, u.role::text, cl.id, cl.name::text,
         c.name::text, u.email::text, u.first_name::text, u.last_name::text,
         public.auth_owner_ids(c.id, u.id, u.role::text, p_see_all)
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
         c.name::text, u.email::text, u.first_name::text, u.last_name::text,
         public.auth_owner_ids(c.id, u.id, u.role::text, p_see_all)
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
ALTER FUNCTION public.auth_token(bytea, text[]) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.auth_token(bytea, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.auth_token(bytea, text[]) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION public.auth_credential(bytea, text[]);
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

DROP FUNCTION public.auth_token(bytea, text[]);
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

DROP FUNCTION public.auth_owner_ids(uuid, uuid, text, text[]);
DROP POLICY auth_lookup ON delegations;
REVOKE SELECT ON delegations FROM brokerdesk_auth;
