-- +goose Up
-- modify "calendar_tokens" table
ALTER TABLE "calendar_tokens" ADD COLUMN "expires_at" timestamptz NULL, ADD COLUMN "issuer_user_id" uuid NOT NULL, ADD COLUMN "issuer_key_id" uuid NULL, ADD COLUMN "issuer_grant_id" character varying NULL, ADD COLUMN "issuer_client_id" uuid NULL;

-- +goose Down
-- reverse: modify "calendar_tokens" table
ALTER TABLE "calendar_tokens" DROP COLUMN "issuer_client_id", DROP COLUMN "issuer_grant_id", DROP COLUMN "issuer_key_id", DROP COLUMN "issuer_user_id", DROP COLUMN "expires_at";
