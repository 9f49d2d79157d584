package oauth

// The authorization server's statements. It works before any company is known, in a transaction
// pinned to none (tenancy.WithOAuthServer), so no policy admits it to the OAuth tables: it
// reaches them only through these SECURITY DEFINER functions (owner brokerdesk_auth,
// migrations/20261127120000_oauth_server_functions.sql), each for one key the server already
// holds. Nothing here is ent's: the functions are the whole interface.
const (
	// sqlClient: an active client by id, without its secret.
	sqlClient = `SELECT id, company_id, name, redirect_uris, scopes, public, env FROM oauth_server_client($1)`
	// sqlClientSecret: whether the SHA-256 of a presented secret is the client's (a verdict).
	sqlClientSecret = `SELECT oauth_server_client_secret($1, $2)`
	// sqlLoginParams: the parameters and salt of each password of the e-mail's users, oldest
	// first, without the derived key.
	sqlLoginParams = `SELECT oauth_server_login_params($1)`
	// sqlLogin: the user whose stored hash is one of the derived ones (a verdict: no row when
	// the password is wrong or the user may not sign in).
	sqlLogin = `SELECT user_id, company_id, company_name, email, first_name, last_name, role, true
		FROM oauth_server_login($1, $2::text[])`
	// sqlUser: the user of a signed-in session or of a grant, and whether it may still sign in.
	sqlUser = `SELECT user_id, company_id, company_name, email, first_name, last_name, role, active
		FROM oauth_server_user($1)`
	// sqlConsent: the scopes a user allowed a client (NULL: none remembered).
	sqlConsent = `SELECT oauth_server_consent($1, $2)`
	// sqlConsentSave remembers the scopes a user allowed a client.
	sqlConsentSave = `SELECT oauth_server_consent_save($1, $2, $3::jsonb)`
	// sqlTokenStore stores a token of a validated request (the function checks that client,
	// company, user, scopes and lifespan belong together).
	sqlTokenStore = `SELECT oauth_server_token_store($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10, $11, $12)`
	// sqlToken: a token by kind and signature hash, locked for the transaction.
	sqlToken = `SELECT request_id, client_id, company_id, user_id, requested_scopes, granted_scopes, form, session,
		requested_at, active FROM oauth_server_token($1, $2)`
	// sqlTokenDeactivate marks one token used.
	sqlTokenDeactivate = `SELECT oauth_server_token_deactivate($1, $2)`
	// sqlPKCEDelete removes a code's PKCE challenge.
	sqlPKCEDelete = `SELECT oauth_server_pkce_delete($1)`
	// sqlGrantRevoke revokes the active tokens of one kind of a grant and counts them.
	sqlGrantRevoke = `SELECT oauth_server_grant_revoke($1, $2)`
	// sqlGrant: a grant's client, company, user, scopes and whether a token of it is live.
	sqlGrant = `SELECT client_id, company_id, user_id, granted_scopes, live FROM oauth_server_grant($1)`
)
