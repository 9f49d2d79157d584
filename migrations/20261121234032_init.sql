-- +goose Up
-- create "companies" table
CREATE TABLE "companies" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "name" character varying NOT NULL, "address" jsonb NULL, "links" jsonb NULL, "features" jsonb NOT NULL, "status" character varying NOT NULL DEFAULT 'active', "sandbox" boolean NOT NULL DEFAULT false, "live_company_id" uuid NULL, PRIMARY KEY ("id"), CONSTRAINT "companies_companies_sandbox_twin" FOREIGN KEY ("live_company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE SET NULL);
-- create index "companies_live_company_id_key" to table: "companies"
CREATE UNIQUE INDEX "companies_live_company_id_key" ON "companies" ("live_company_id");
-- create "api_keys" table
CREATE TABLE "api_keys" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "user_id" uuid NULL, "kind" character varying NOT NULL, "env" character varying NOT NULL, "prefix" character varying NOT NULL, "hash" bytea NOT NULL, "scopes" jsonb NOT NULL, "allowed_domains" jsonb NOT NULL, "name" character varying NOT NULL DEFAULT '', "status" character varying NOT NULL DEFAULT 'active', "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "api_keys_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "apikey_company_id" to table: "api_keys"
CREATE INDEX "apikey_company_id" ON "api_keys" ("company_id");
-- create index "apikey_hash" to table: "api_keys"
CREATE UNIQUE INDEX "apikey_hash" ON "api_keys" ("hash");
-- create "external_refs" table
CREATE TABLE "external_refs" ("id" uuid NOT NULL, "resource" character varying NOT NULL, "resource_id" uuid NOT NULL, "source" character varying NOT NULL, "external_id" character varying NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "external_refs_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "externalref_company_id" to table: "external_refs"
CREATE INDEX "externalref_company_id" ON "external_refs" ("company_id");
-- create index "externalref_company_id_resource_resource_id" to table: "external_refs"
CREATE INDEX "externalref_company_id_resource_resource_id" ON "external_refs" ("company_id", "resource", "resource_id");
-- create index "externalref_company_id_resource_source_external_id" to table: "external_refs"
CREATE UNIQUE INDEX "externalref_company_id_resource_source_external_id" ON "external_refs" ("company_id", "resource", "source", "external_id");
-- create "users" table
CREATE TABLE "users" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "external_references" jsonb NULL, "email" character varying NOT NULL, "first_name" character varying NOT NULL DEFAULT '', "last_name" character varying NOT NULL DEFAULT '', "status" character varying NOT NULL DEFAULT 'active', "role" character varying NOT NULL DEFAULT 'agent', "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "users_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "user_company_id" to table: "users"
CREATE INDEX "user_company_id" ON "users" ("company_id");
-- create index "user_company_id_created_at_id" to table: "users"
CREATE INDEX "user_company_id_created_at_id" ON "users" ("company_id", "created_at", "id");
-- create index "user_company_id_email" to table: "users"
CREATE UNIQUE INDEX "user_company_id_email" ON "users" ("company_id", "email");

-- +goose Down
-- reverse: create index "user_company_id_email" to table: "users"
DROP INDEX "user_company_id_email";
-- reverse: create index "user_company_id_created_at_id" to table: "users"
DROP INDEX "user_company_id_created_at_id";
-- reverse: create index "user_company_id" to table: "users"
DROP INDEX "user_company_id";
-- reverse: create "users" table
DROP TABLE "users";
-- reverse: create index "externalref_company_id_resource_source_external_id" to table: "external_refs"
DROP INDEX "externalref_company_id_resource_source_external_id";
-- reverse: create index "externalref_company_id_resource_resource_id" to table: "external_refs"
DROP INDEX "externalref_company_id_resource_resource_id";
-- reverse: create index "externalref_company_id" to table: "external_refs"
DROP INDEX "externalref_company_id";
-- reverse: create "external_refs" table
DROP TABLE "external_refs";
-- reverse: create index "apikey_hash" to table: "api_keys"
DROP INDEX "apikey_hash";
-- reverse: create index "apikey_company_id" to table: "api_keys"
DROP INDEX "apikey_company_id";
-- reverse: create "api_keys" table
DROP TABLE "api_keys";
-- reverse: create index "companies_live_company_id_key" to table: "companies"
DROP INDEX "companies_live_company_id_key";
-- reverse: create "companies" table
DROP TABLE "companies";
