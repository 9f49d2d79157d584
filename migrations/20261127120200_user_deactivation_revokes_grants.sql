-- Hand-written: a user set inactive or suspended loses the OAuth grants they gave (issue 20 item
-- 10). auth_token and the token endpoint refuse an inactive user's tokens, but the rows stayed
-- active, so re-activating the user revived every old access and refresh token (and the webhook
-- endpoints acting for them). The trigger revokes them when the status leaves 'active', whoever
-- changes it (operator commands, SQL); re-activation starts without grants. It runs as
-- brokerdesk_auth, which may flip oauth_tokens.active (20261127120000), whatever the updater's
-- row-level security lets it see. Codes and PKCE challenges go too: a code issued just before is
-- no grant to keep. Consents stay (a choice of the user, not a credential: the next sign-in
-- skips the consent screen as before). docs/decisions/auth-and-oauth.md "Deactivating a user".

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION public.users_revoke_oauth_grants() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  UPDATE public.oauth_tokens t SET active = false
  WHERE t.company_id = NEW.company_id AND t.user_id = NEW.id AND t.active;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER users_revoke_oauth_grants AFTER UPDATE OF status ON users
  FOR EACH ROW WHEN (OLD.status = 'active' AND NEW.status <> 'active')
  EXECUTE FUNCTION public.users_revoke_oauth_grants();
GRANT CREATE ON SCHEMA public TO brokerdesk_auth;
ALTER FUNCTION public.users_revoke_oauth_grants() OWNER TO brokerdesk_auth;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_auth;
REVOKE ALL ON FUNCTION public.users_revoke_oauth_grants() FROM PUBLIC;

-- +goose Down
DROP TRIGGER users_revoke_oauth_grants ON users;
DROP FUNCTION public.users_revoke_oauth_grants();
