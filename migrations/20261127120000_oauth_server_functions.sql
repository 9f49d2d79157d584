-- Hand-written: no setting a session can SET itself opens a table (issue 20 item 1). The
-- oauth_server policies admitted every company's OAuth clients, tokens and consents when
-- app.oauth = 'server', which any session may set; oauth_login_users handed out password hashes
-- on the same condition. The authorization server now reaches the OAuth tables only through the
-- SECURITY DEFINER functions below, owned by brokerdesk_auth (the owner of the credential
-- lookups), each doing one thing for one key the caller must already know: a client by id, a
-- token by the hash of its signature, a grant by its request id, a user by id. None lists rows,
-- none returns a password or client secret hash: the sign-in and the client authentication get a
-- verdict. The app role keeps SELECT on the three tables under company_isolation (its own
-- company's rows, like any tenant table) and loses every write: tokens and consents are stored
-- by the functions, which check that they belong together (client, company, user, scopes,
-- lifespan). docs/decisions/auth-and-oauth.md "Storage: functions, no switch".

-- +goose Up
DROP POLICY oauth_server ON oauth_clients;
DROP POLICY oauth_server ON oauth_tokens;
DROP POLICY oauth_server ON oauth_consents;
DROP FUNCTION oauth_login_users(text, uuid);
REVOKE UPDATE (active) ON oauth_tokens FROM brokerdesk_app;
REVOKE UPDATE (scopes, updated_at) ON oauth_consents FROM brokerdesk_app;
REVOKE INSERT, UPDATE, DELETE ON oauth_tokens, oauth_consents FROM brokerdesk_app;

GRANT SELECT ON oauth_consents TO brokerdesk_auth;
GRANT INSERT, DELETE ON oauth_tokens TO brokerdesk_auth;
GRANT UPDATE (active) ON oauth_tokens TO brokerdesk_auth;
GRANT INSERT ON oauth_consents TO brokerdesk_auth;
GRANT UPDATE (scopes, updated_at) ON oauth_consents TO brokerdesk_auth;
CREATE POLICY auth_server ON oauth_tokens TO brokerdesk_auth USING (true) WITH CHECK (true);
CREATE POLICY auth_server ON oauth_consents TO brokerdesk_auth USING (true) WITH CHECK (true);

-- An active client by id, without its secret (fosite.ClientManager).
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_client(p_id uuid) RETURNS TABLE (
  id uuid, company_id uuid, name text, redirect_uris jsonb, scopes jsonb, public boolean, env text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT c.id, c.company_id, c.name::text, c.redirect_uris, c.scopes, c.public, c.env::text
  FROM public.oauth_clients c WHERE c.id = p_id AND c.status = 'active'
$$;
-- +goose StatementEnd

-- Client authentication: whether p_secret_hash (the SHA-256 of the presented secret) is the
-- active confidential client's. A verdict, never the stored hash.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_client_secret(p_id uuid, p_secret_hash bytea) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT EXISTS (SELECT FROM public.oauth_clients c
    WHERE c.id = p_id AND c.status = 'active' AND NOT c.public AND c.secret_hash = p_secret_hash)
$$;
-- +goose StatementEnd

-- Sign-in, step one: the argon2id parameters and salt of each password of users of live
-- companies with this e-mail, oldest first, without the derived key (the part of a PHC string
-- worth cracking). The caller derives a key from the typed password for each.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_login_params(p_email text) RETURNS SETOF text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT regexp_replace(u.password_hash, '\$[^$]*$', '')
  FROM public.users u JOIN public.companies c ON c.id = u.company_id AND NOT c.sandbox
  WHERE u.email = p_email AND u.password_hash LIKE '$argon2id$%'
  ORDER BY u.created_at, u.id
$$;
-- +goose StatementEnd

-- Sign-in, step two: the verdict. The oldest active user of an active live company with this
-- e-mail whose stored hash is one of p_hashes (the PHC strings the caller derived), or no row.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_login(p_email text, p_hashes text[]) RETURNS TABLE (
  user_id uuid, company_id uuid, company_name text, email text, first_name text, last_name text, role text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT u.id, c.id, c.name::text, u.email::text, u.first_name::text, u.last_name::text, u.role::text
  FROM public.users u JOIN public.companies c ON c.id = u.company_id AND NOT c.sandbox AND c.status = 'active'
  WHERE u.email = p_email AND u.status = 'active' AND u.password_hash = ANY (p_hashes)
  ORDER BY u.created_at, u.id
  LIMIT 1
$$;
-- +goose StatementEnd

-- The user of a signed-in session (the cookie names it, signed by the server) or of a grant at
-- its code exchange and refresh: a user of a live company, whether it may still sign in.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_user(p_user uuid) RETURNS TABLE (
  user_id uuid, company_id uuid, company_name text, email text, first_name text, last_name text, role text,
  active boolean)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT u.id, c.id, c.name::text, u.email::text, u.first_name::text, u.last_name::text, u.role::text,
         u.status = 'active' AND c.status = 'active'
  FROM public.users u JOIN public.companies c ON c.id = u.company_id AND NOT c.sandbox
  WHERE u.id = p_user
$$;
-- +goose StatementEnd

-- The scopes a user allowed a client (NULL: none remembered).
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_consent(p_user uuid, p_client uuid) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT o.scopes FROM public.oauth_consents o WHERE o.user_id = p_user AND o.client_id = p_client
$$;
-- +goose StatementEnd

-- Remembers that an active user of an active live company allowed a client scopes of its own:
-- in the user's company, and only for a client bound to none or to that company.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_consent_save(p_user uuid, p_client uuid, p_scopes jsonb) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO public.oauth_consents AS o (id, created_at, updated_at, company_id, user_id, client_id, scopes)
  SELECT gen_random_uuid(), now(), now(), u.company_id, u.id, cl.id, p_scopes
  FROM public.users u
  JOIN public.companies c ON c.id = u.company_id AND NOT c.sandbox AND c.status = 'active'
  JOIN public.oauth_clients cl ON cl.id = p_client AND cl.status = 'active'
   AND (cl.company_id IS NULL OR cl.company_id = u.company_id)
  WHERE u.id = p_user AND u.status = 'active' AND jsonb_typeof(p_scopes) = 'array' AND p_scopes <@ cl.scopes
  ON CONFLICT (user_id, client_id) DO UPDATE SET scopes = EXCLUDED.scopes, updated_at = now();
  IF NOT FOUND THEN
    RAISE EXCEPTION 'oauth consent refused: no such client for this user' USING ERRCODE = '42501';
  END IF;
END $$;
-- +goose StatementEnd

-- Stores a token of a request the server validated, after checking what the database can: an
-- active client; granted scopes among the client's; a lifespan no longer than the kind's
-- (app/oauth: code and PKCE 10 minutes, access token 1 hour, refresh token 30 days, plus a
-- minute); an active live company; for client credentials (no user) an access token of a
-- confidential client bound to that company; for a user's grant an active user of that company,
-- a client bound to none or to it, and for an access or refresh token the grant's code or
-- refresh token (same request id, client, company, user, at least these scopes) stored before.
-- An access token is also worthless without its HMAC (tenancy checks it before auth_token), so
-- a row stored here by anyone but the server resolves nothing.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_token_store(p_kind text, p_signature_hash bytea, p_request_id text, p_client uuid,
  p_company uuid, p_user uuid, p_requested jsonb, p_granted jsonb, p_form jsonb, p_session bytea,
  p_requested_at timestamptz, p_expires_at timestamptz) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  cl public.oauth_clients;
  ok boolean;
BEGIN
  SELECT * INTO cl FROM public.oauth_clients c WHERE c.id = p_client AND c.status = 'active';
  ok := FOUND
    AND p_kind IN ('authorize_code', 'pkce', 'access_token', 'refresh_token')
    AND jsonb_typeof(p_requested) = 'array' AND jsonb_typeof(p_granted) = 'array' AND p_granted <@ cl.scopes
    AND p_expires_at <= now() + interval '1 minute' + CASE p_kind
      WHEN 'access_token' THEN interval '1 hour' WHEN 'refresh_token' THEN interval '30 days'
      ELSE interval '10 minutes' END
    AND EXISTS (SELECT FROM public.companies c WHERE c.id = p_company AND c.status = 'active' AND NOT c.sandbox);
  IF ok AND p_user IS NULL THEN
    ok := p_kind = 'access_token' AND NOT cl.public AND cl.company_id = p_company;
  ELSIF ok THEN
    ok := (cl.company_id IS NULL OR cl.company_id = p_company)
      AND EXISTS (SELECT FROM public.users u WHERE u.company_id = p_company AND u.id = p_user AND u.status = 'active')
      AND (p_kind IN ('authorize_code', 'pkce') OR EXISTS (
        SELECT FROM public.oauth_tokens t
        WHERE t.request_id = p_request_id AND t.client_id = p_client AND t.company_id = p_company
          AND t.user_id = p_user AND t.kind IN ('authorize_code', 'refresh_token') AND p_granted <@ t.granted_scopes));
  END IF;
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'oauth token refused: not a grant of this client' USING ERRCODE = '42501';
  END IF;
  INSERT INTO public.oauth_tokens (id, kind, signature_hash, request_id, client_id, company_id, user_id,
    requested_scopes, granted_scopes, form, session, requested_at, expires_at, active, created_at)
  VALUES (gen_random_uuid(), p_kind, p_signature_hash, p_request_id, p_client, p_company, p_user,
    p_requested, p_granted, p_form, p_session, p_requested_at, p_expires_at, true, now());
END $$;
-- +goose StatementEnd

-- A token by the hash of its signature, locked (FOR UPDATE: two uses of one code or refresh
-- token are serialised), used or not: a used code or rotated refresh token comes back inactive
-- so that its replay is recognised.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_token(p_kind text, p_signature_hash bytea) RETURNS TABLE (
  request_id text, client_id uuid, company_id uuid, user_id uuid, requested_scopes jsonb, granted_scopes jsonb,
  form jsonb, session bytea, requested_at timestamptz, active boolean)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT t.request_id::text, t.client_id, t.company_id, t.user_id, t.requested_scopes, t.granted_scopes,
         t.form, t.session, t.requested_at, t.active
  FROM public.oauth_tokens t
  WHERE t.signature_hash = p_signature_hash AND t.kind = p_kind
  FOR UPDATE;
END $$;
-- +goose StatementEnd

-- Marks one token used (a code exchanged, a refresh token rotated, an access token deleted).
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_token_deactivate(p_kind text, p_signature_hash bytea) RETURNS void
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  UPDATE public.oauth_tokens t SET active = false WHERE t.signature_hash = p_signature_hash AND t.kind = p_kind
$$;
-- +goose StatementEnd

-- Removes a code's PKCE challenge once the code was exchanged.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_pkce_delete(p_signature_hash bytea) RETURNS void
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  DELETE FROM public.oauth_tokens t WHERE t.signature_hash = p_signature_hash AND t.kind = 'pkce'
$$;
-- +goose StatementEnd

-- Revokes the active tokens of one kind of a grant; returns how many.
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_grant_revoke(p_request_id text, p_kind text) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  n integer;
BEGIN
  UPDATE public.oauth_tokens t SET active = false
  WHERE t.request_id = p_request_id AND t.kind = p_kind AND t.active;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
-- +goose StatementEnd

-- A grant's access and refresh tokens as one row: client, company, user, the scopes first
-- granted, and whether any token is still active (no row: no such grant).
-- +goose StatementBegin
CREATE FUNCTION public.oauth_server_grant(p_request_id text) RETURNS TABLE (
  client_id uuid, company_id uuid, user_id uuid, granted_scopes jsonb, live boolean)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT t.client_id, t.company_id, t.user_id, (array_agg(t.granted_scopes ORDER BY t.created_at))[1], bool_or(t.active)
  FROM public.oauth_tokens t
  WHERE t.request_id = p_request_id AND t.kind IN ('access_token', 'refresh_token')
  GROUP BY t.client_id, t.company_id, t.user_id
$$;
-- +goose StatementEnd

GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_client(uuid) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_client_secret(uuid, bytea) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_login_params(text) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_login(text, text[]) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_user(uuid) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_consent(uuid, uuid) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_consent_save(uuid, uuid, jsonb) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_token_store(text, bytea, text, uuid, uuid, uuid, jsonb, jsonb, jsonb, bytea, timestamptz, timestamptz) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_token(text, bytea) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_token_deactivate(text, bytea) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_pkce_delete(bytea) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_grant_revoke(text, text) OWNER TO brokerdesk_auth;
ALTER FUNCTION public.oauth_server_grant(text) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.oauth_server_client(uuid), public.oauth_server_client_secret(uuid, bytea),
  public.oauth_server_login_params(text), public.oauth_server_login(text, text[]), public.oauth_server_user(uuid),
  public.oauth_server_consent(uuid, uuid), public.oauth_server_consent_save(uuid, uuid, jsonb),
  public.oauth_server_token_store(text, bytea, text, uuid, uuid, uuid, jsonb, jsonb, jsonb, bytea, timestamptz, timestamptz),
  public.oauth_server_token(text, bytea), public.oauth_server_token_deactivate(text, bytea),
  public.oauth_server_pkce_delete(bytea), public.oauth_server_grant_revoke(text, text), public.oauth_server_grant(text)
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.oauth_server_client(uuid), public.oauth_server_client_secret(uuid, bytea),
  public.oauth_server_login_params(text), public.oauth_server_login(text, text[]), public.oauth_server_user(uuid),
  public.oauth_server_consent(uuid, uuid), public.oauth_server_consent_save(uuid, uuid, jsonb),
  public.oauth_server_token_store(text, bytea, text, uuid, uuid, uuid, jsonb, jsonb, jsonb, bytea, timestamptz, timestamptz),
  public.oauth_server_token(text, bytea), public.oauth_server_token_deactivate(text, bytea),
  public.oauth_server_pkce_delete(bytea), public.oauth_server_grant_revoke(text, text), public.oauth_server_grant(text)
  TO brokerdesk_app;

-- +goose Down
-- Irreversible on purpose: going back would recreate the oauth_server policies and
-- oauth_login_users, opened by app.oauth = 'server', which any session may SET (issue 20 item 1:
-- every company's clients, tokens and password hashes). Roll back by restoring a backup taken
-- before this migration, or deploy a fix forward.
-- +goose StatementBegin
DO $$
BEGIN
  RAISE EXCEPTION 'migration 20261127120000 is irreversible: its Down would reopen the OAuth tables to any session (SET app.oauth); restore a backup or fix forward';
END $$;
-- +goose StatementEnd
