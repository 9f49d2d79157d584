-- Hand-written (issue 20 §2): calendar feed tokens remember the credential that issued them and
-- die with it. Tokens issued before did not record it (a company-level key could issue them for
-- every user, and they outlived that key), so none of them can be tied to a credential: they are
-- revoked here, and their users issue new ones (the feed answers 404 meanwhile, as for any
-- revoked token). The next migration adds the issuer columns, NOT NULL where a token must have
-- one. The table is FORCEd: only the operator role's policy sees every company's rows.

-- +goose Up
SET LOCAL ROLE brokerdesk_operator;
DELETE FROM calendar_tokens;
RESET ROLE;

-- +goose Down
SELECT 1;
