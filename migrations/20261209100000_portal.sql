-- +goose Up
-- modify "documents" table
ALTER TABLE "documents" ADD COLUMN "released_at" timestamptz NULL;
-- create "portal_accesses" table
CREATE TABLE "portal_accesses" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "status" character varying NOT NULL DEFAULT 'pending', "email" character varying NOT NULL, "password_hash" character varying NULL, "totp_secret" bytea NULL, "totp_enabled_at" timestamptz NULL, "totp_last_step" bigint NOT NULL DEFAULT 0, "invited_at" timestamptz NOT NULL, "invited_by" uuid NULL, "invitations_sent" bigint NOT NULL DEFAULT 0, "activated_at" timestamptz NULL, "revoked_at" timestamptz NULL, "last_login_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "portal_accesses_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "portalaccess_company_id" to table: "portal_accesses"
CREATE INDEX "portalaccess_company_id" ON "portal_accesses" ("company_id");
-- create index "portalaccess_company_id_contact_id" to table: "portal_accesses"
CREATE UNIQUE INDEX "portalaccess_company_id_contact_id" ON "portal_accesses" ("company_id", "contact_id");
-- create index "portalaccess_company_id_email" to table: "portal_accesses"
CREATE INDEX "portalaccess_company_id_email" ON "portal_accesses" ("company_id", "email");
-- create "portal_change_requests" table
CREATE TABLE "portal_change_requests" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "access_id" uuid NULL, "kind" character varying NOT NULL, "changes" jsonb NOT NULL, "baseline" jsonb NOT NULL, "sealed" bytea NULL, "status" character varying NOT NULL DEFAULT 'pending', "reason" character varying NOT NULL DEFAULT '', "decided_by" uuid NULL, "decided_at" timestamptz NULL, "withdrawn_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "portal_change_requests_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "portalchangerequest_company_id" to table: "portal_change_requests"
CREATE INDEX "portalchangerequest_company_id" ON "portal_change_requests" ("company_id");
-- create index "portalchangerequest_company_id_contact_id_created_at" to table: "portal_change_requests"
CREATE INDEX "portalchangerequest_company_id_contact_id_created_at" ON "portal_change_requests" ("company_id", "contact_id", "created_at");
-- create index "portalchangerequest_company_id_status_created_at_id" to table: "portal_change_requests"
CREATE INDEX "portalchangerequest_company_id_status_created_at_id" ON "portal_change_requests" ("company_id", "status", "created_at", "id");
-- create "portal_sessions" table
CREATE TABLE "portal_sessions" ("id" uuid NOT NULL, "access_id" uuid NOT NULL, "contact_id" uuid NOT NULL, "token_hash" bytea NOT NULL, "second_factor_pending" boolean NOT NULL DEFAULT false, "created_at" timestamptz NOT NULL, "last_seen_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "ip" character varying NOT NULL DEFAULT '', "user_agent" character varying NOT NULL DEFAULT '', "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "portal_sessions_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "portalsession_company_id" to table: "portal_sessions"
CREATE INDEX "portalsession_company_id" ON "portal_sessions" ("company_id");
-- create index "portalsession_company_id_access_id" to table: "portal_sessions"
CREATE INDEX "portalsession_company_id_access_id" ON "portal_sessions" ("company_id", "access_id");
-- create index "portalsession_expires_at" to table: "portal_sessions"
CREATE INDEX "portalsession_expires_at" ON "portal_sessions" ("expires_at");
-- create index "portalsession_token_hash" to table: "portal_sessions"
CREATE UNIQUE INDEX "portalsession_token_hash" ON "portal_sessions" ("token_hash");
-- create "portal_tokens" table
CREATE TABLE "portal_tokens" ("id" uuid NOT NULL, "access_id" uuid NOT NULL, "contact_id" uuid NOT NULL, "purpose" character varying NOT NULL, "token_hash" bytea NOT NULL, "expires_at" timestamptz NOT NULL, "used_at" timestamptz NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "portal_tokens_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "portaltoken_company_id" to table: "portal_tokens"
CREATE INDEX "portaltoken_company_id" ON "portal_tokens" ("company_id");
-- create index "portaltoken_company_id_access_id" to table: "portal_tokens"
CREATE INDEX "portaltoken_company_id_access_id" ON "portal_tokens" ("company_id", "access_id");
-- create index "portaltoken_token_hash" to table: "portal_tokens"
CREATE UNIQUE INDEX "portaltoken_token_hash" ON "portal_tokens" ("token_hash");

-- +goose Down
-- reverse: create index "portaltoken_token_hash" to table: "portal_tokens"
DROP INDEX "portaltoken_token_hash";
-- reverse: create index "portaltoken_company_id_access_id" to table: "portal_tokens"
DROP INDEX "portaltoken_company_id_access_id";
-- reverse: create index "portaltoken_company_id" to table: "portal_tokens"
DROP INDEX "portaltoken_company_id";
-- reverse: create "portal_tokens" table
DROP TABLE "portal_tokens";
-- reverse: create index "portalsession_token_hash" to table: "portal_sessions"
DROP INDEX "portalsession_token_hash";
-- reverse: create index "portalsession_expires_at" to table: "portal_sessions"
DROP INDEX "portalsession_expires_at";
-- reverse: create index "portalsession_company_id_access_id" to table: "portal_sessions"
DROP INDEX "portalsession_company_id_access_id";
-- reverse: create index "portalsession_company_id" to table: "portal_sessions"
DROP INDEX "portalsession_company_id";
-- reverse: create "portal_sessions" table
DROP TABLE "portal_sessions";
-- reverse: create index "portalchangerequest_company_id_status_created_at_id" to table: "portal_change_requests"
DROP INDEX "portalchangerequest_company_id_status_created_at_id";
-- reverse: create index "portalchangerequest_company_id_contact_id_created_at" to table: "portal_change_requests"
DROP INDEX "portalchangerequest_company_id_contact_id_created_at";
-- reverse: create index "portalchangerequest_company_id" to table: "portal_change_requests"
DROP INDEX "portalchangerequest_company_id";
-- reverse: create "portal_change_requests" table
DROP TABLE "portal_change_requests";
-- reverse: create index "portalaccess_company_id_email" to table: "portal_accesses"
DROP INDEX "portalaccess_company_id_email";
-- reverse: create index "portalaccess_company_id_contact_id" to table: "portal_accesses"
DROP INDEX "portalaccess_company_id_contact_id";
-- reverse: create index "portalaccess_company_id" to table: "portal_accesses"
DROP INDEX "portalaccess_company_id";
-- reverse: create "portal_accesses" table
DROP TABLE "portal_accesses";
-- reverse: modify "documents" table
ALTER TABLE "documents" DROP COLUMN "released_at";
