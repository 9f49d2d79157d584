package appointments

// The statements of this package that go below ent, each with the reason.

// grantQuery finds the OAuth grant (request id) of an access token of the pinned company, as
// the SECURITY DEFINER function calendar_token_grant reads it (the app role reads no token rows).
const grantQuery = `SELECT grant_id, client_id FROM calendar_token_grant($1)`
