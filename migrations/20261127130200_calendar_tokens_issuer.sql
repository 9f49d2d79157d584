-- Hand-written (issue 20 §2): a calendar feed token answers only while the credential that
-- issued it is alive and before its expiry (docs/decisions/work.md, "Calendar feed tokens").
--
-- The issuer is the user's own credential or an admin's (app/appointments decides who may
-- issue): an API key (issuer_key_id) or an OAuth grant (issuer_grant_id: the request id that
-- every access and refresh token of one grant shares across refreshes, issuer_client_id its
-- client). It is alive while, as the credential's own lookup (auth_credential, auth_token)
-- would find it:
--   key:   active, its user active (issuers are users: company-level credentials issue none);
--   grant: an access or refresh token of it active and unexpired, its client active, its user
--          active. Revoking the grant (RFC 7009, refresh-token reuse, the user's deactivation
--          revoking grants) deactivates its tokens; the check reads that at every feed request.
-- The feed's own user must be active too (calendar_feed_user did already).

-- +goose Up
ALTER TABLE calendar_tokens ADD CONSTRAINT tenant_calendar_tokens_issuer CHECK (
  (issuer_key_id IS NULL) <> (issuer_grant_id IS NULL) AND (issuer_grant_id IS NULL) = (issuer_client_id IS NULL));
ALTER TABLE calendar_tokens ADD CONSTRAINT tenant_calendar_tokens_issuer_user
  FOREIGN KEY (company_id, issuer_user_id) REFERENCES users (company_id, id) ON DELETE CASCADE;
-- Deleting the issuing key deletes its tokens (deactivating it only silences them).
ALTER TABLE calendar_tokens ADD CONSTRAINT tenant_calendar_tokens_issuer_key
  FOREIGN KEY (company_id, issuer_key_id) REFERENCES api_keys (company_id, id) ON DELETE CASCADE;

-- calendar_token_alive: the rule above for a token of p_company, beside its expiry and its
-- user: does the feed answer it? Not executable by the app role: calendar_feed_user and
-- calendar_token_live call it as their owner.
-- +goose StatementBegin
CREATE FUNCTION public.calendar_token_alive(p_company uuid, p_user uuid, p_expires timestamptz, p_key uuid, p_grant text)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT (p_expires IS NULL OR p_expires > now())
    AND EXISTS (SELECT FROM public.users u WHERE u.company_id = p_company AND u.id = p_user AND u.status = 'active')
    AND CASE
      WHEN p_key IS NOT NULL THEN EXISTS (
        SELECT FROM public.api_keys k
        JOIN public.users u ON u.company_id = k.company_id AND u.id = k.user_id AND u.status = 'active'
        WHERE k.company_id = p_company AND k.id = p_key AND k.status = 'active')
      WHEN p_grant IS NOT NULL THEN EXISTS (
        -- A test client's grant lives in the live company, its token in the sandbox twin.
        SELECT FROM public.companies c
        JOIN public.oauth_tokens t ON t.company_id = coalesce(c.live_company_id, c.id) AND t.request_id = p_grant
        JOIN public.oauth_clients cl ON cl.id = t.client_id AND cl.status = 'active'
        JOIN public.users u ON u.company_id = t.company_id AND u.id = t.user_id AND u.status = 'active'
        WHERE c.id = p_company AND t.kind IN ('access_token', 'refresh_token') AND t.active AND t.expires_at > now())
      ELSE false
    END
$$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.calendar_token_alive(uuid, uuid, timestamptz, uuid, text) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.calendar_token_alive(uuid, uuid, timestamptz, uuid, text) FROM PUBLIC;

-- The feed: the token's company active, and calendar_token_alive. An expired or orphaned token
-- is exactly an unknown one (404).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION public.calendar_feed_user(p_hash bytea) RETURNS TABLE (company_id uuid, user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT t.company_id, u.id, u.role::text
  FROM public.calendar_tokens t
  JOIN public.companies c ON c.id = t.company_id AND c.status = 'active'
  JOIN public.users u ON u.company_id = t.company_id AND u.id = t.user_id AND u.status = 'active'
  WHERE t.token_hash = p_hash
    AND public.calendar_token_alive(t.company_id, t.user_id, t.expires_at, t.issuer_key_id, t.issuer_grant_id);
END $$;
-- +goose StatementEnd

-- calendar_token_live: calendar_token_alive for a token of the pinned company (its columns),
-- for the admins' list (GET /calendar-tokens), which shows the tokens the feed would answer.
-- Only the pinned company's users, keys and grants are asked about.
-- +goose StatementBegin
CREATE FUNCTION public.calendar_token_live(p_user uuid, p_expires timestamptz, p_key uuid, p_grant text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT public.calendar_token_alive(public.app_current_company(), p_user, p_expires, p_key, p_grant) $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.calendar_token_live(uuid, timestamptz, uuid, text) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.calendar_token_live(uuid, timestamptz, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.calendar_token_live(uuid, timestamptz, uuid, text) TO brokerdesk_app;

-- calendar_token_grant: the grant (request id) and client of the pinned company's active access
-- token p_token: what a token issued by an OAuth access token remembers (the access token
-- itself lives an hour; the grant it belongs to is the credential). The app role reads no
-- OAuth token rows itself; a test client's token is found from its sandbox twin.
-- +goose StatementBegin
CREATE FUNCTION public.calendar_token_grant(p_token uuid) RETURNS TABLE (grant_id text, client_id uuid)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT t.request_id::text, t.client_id
  FROM public.companies c
  JOIN public.oauth_tokens t ON t.company_id = coalesce(c.live_company_id, c.id)
  WHERE c.id = public.app_current_company() AND t.id = p_token
    AND t.kind = 'access_token' AND t.active AND t.expires_at > now()
$$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.calendar_token_grant(uuid) OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.calendar_token_grant(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.calendar_token_grant(uuid) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION public.calendar_token_grant(uuid);
DROP FUNCTION public.calendar_token_live(uuid, timestamptz, uuid, text);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION public.calendar_feed_user(p_hash bytea) RETURNS TABLE (company_id uuid, user_id uuid, user_role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT t.company_id, u.id, u.role::text
  FROM public.calendar_tokens t
  JOIN public.companies c ON c.id = t.company_id AND c.status = 'active'
  JOIN public.users u ON u.company_id = t.company_id AND u.id = t.user_id AND u.status = 'active'
  WHERE t.token_hash = p_hash;
END $$;
-- +goose StatementEnd
DROP FUNCTION public.calendar_token_alive(uuid, uuid, timestamptz, uuid, text);
ALTER TABLE calendar_tokens DROP CONSTRAINT tenant_calendar_tokens_issuer_key;
ALTER TABLE calendar_tokens DROP CONSTRAINT tenant_calendar_tokens_issuer_user;
ALTER TABLE calendar_tokens DROP CONSTRAINT tenant_calendar_tokens_issuer;
