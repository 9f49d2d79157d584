-- +goose Up
-- modify "users" table
ALTER TABLE "users" ADD COLUMN "password_hash" character varying NULL;
-- create "oauth_clients" table
CREATE TABLE "oauth_clients" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "company_id" uuid NULL, "name" character varying NOT NULL, "secret_hash" bytea NULL, "redirect_uris" jsonb NOT NULL, "scopes" jsonb NOT NULL, "public" boolean NOT NULL DEFAULT false, "env" character varying NOT NULL DEFAULT 'live', "status" character varying NOT NULL DEFAULT 'active', PRIMARY KEY ("id"));
-- create "oauth_consents" table
CREATE TABLE "oauth_consents" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, "user_id" uuid NOT NULL, "client_id" uuid NOT NULL, "scopes" jsonb NOT NULL, PRIMARY KEY ("id"));
-- create index "oauthconsent_user_id_client_id" to table: "oauth_consents"
CREATE UNIQUE INDEX "oauthconsent_user_id_client_id" ON "oauth_consents" ("user_id", "client_id");
-- create "oauth_tokens" table
CREATE TABLE "oauth_tokens" ("id" uuid NOT NULL, "kind" character varying NOT NULL, "signature_hash" bytea NOT NULL, "request_id" character varying NOT NULL, "client_id" uuid NOT NULL, "company_id" uuid NOT NULL, "user_id" uuid NULL, "requested_scopes" jsonb NOT NULL, "granted_scopes" jsonb NOT NULL, "form" jsonb NULL, "session" bytea NOT NULL, "requested_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "active" boolean NOT NULL DEFAULT true, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "oauthtoken_client_id_user_id" to table: "oauth_tokens"
CREATE INDEX "oauthtoken_client_id_user_id" ON "oauth_tokens" ("client_id", "user_id");
-- create index "oauthtoken_request_id" to table: "oauth_tokens"
CREATE INDEX "oauthtoken_request_id" ON "oauth_tokens" ("request_id");
-- create index "oauthtoken_signature_hash_kind" to table: "oauth_tokens"
CREATE UNIQUE INDEX "oauthtoken_signature_hash_kind" ON "oauth_tokens" ("signature_hash", "kind");

-- +goose Down
-- reverse: create index "oauthtoken_signature_hash_kind" to table: "oauth_tokens"
DROP INDEX "oauthtoken_signature_hash_kind";
-- reverse: create index "oauthtoken_request_id" to table: "oauth_tokens"
DROP INDEX "oauthtoken_request_id";
-- reverse: create index "oauthtoken_client_id_user_id" to table: "oauth_tokens"
DROP INDEX "oauthtoken_client_id_user_id";
-- reverse: create "oauth_tokens" table
DROP TABLE "oauth_tokens";
-- reverse: create index "oauthconsent_user_id_client_id" to table: "oauth_consents"
DROP INDEX "oauthconsent_user_id_client_id";
-- reverse: create "oauth_consents" table
DROP TABLE "oauth_consents";
-- reverse: create "oauth_clients" table
DROP TABLE "oauth_clients";
-- reverse: modify "users" table
ALTER TABLE "users" DROP COLUMN "password_hash";
