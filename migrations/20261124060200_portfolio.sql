-- +goose Up
-- create "portfolio_transfers" table
CREATE TABLE "portfolio_transfers" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "status" character varying NOT NULL DEFAULT 'pending', "format" character varying NOT NULL, "source" character varying NOT NULL, "owner_id" uuid NULL, "mapping_id" uuid NULL, "auto_commit" boolean NOT NULL DEFAULT false, "write_mode" character varying NOT NULL DEFAULT 'overwrite', "encoding" character varying NOT NULL DEFAULT '', "filename" character varying NOT NULL DEFAULT '', "size" bigint NOT NULL, "sha256" character varying NOT NULL, "blob_key" character varying NOT NULL, "summary" jsonb NULL, "issues" jsonb NULL, "committed" bigint NOT NULL DEFAULT 0, "progress" jsonb NULL, "error" character varying NOT NULL DEFAULT '', "validated_at" timestamptz NULL, "committed_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "portfolio_transfers_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "portfoliotransfer_company_id" to table: "portfolio_transfers"
CREATE INDEX "portfoliotransfer_company_id" ON "portfolio_transfers" ("company_id");
-- create index "portfoliotransfer_company_id_created_at_id" to table: "portfolio_transfers"
CREATE INDEX "portfoliotransfer_company_id_created_at_id" ON "portfolio_transfers" ("company_id", "created_at", "id");
-- create index "portfoliotransfer_company_id_status" to table: "portfolio_transfers"
CREATE INDEX "portfoliotransfer_company_id_status" ON "portfolio_transfers" ("company_id", "status");

-- +goose Down
-- reverse: create index "portfoliotransfer_company_id_status" to table: "portfolio_transfers"
DROP INDEX "portfoliotransfer_company_id_status";
-- reverse: create index "portfoliotransfer_company_id_created_at_id" to table: "portfolio_transfers"
DROP INDEX "portfoliotransfer_company_id_created_at_id";
-- reverse: create index "portfoliotransfer_company_id" to table: "portfolio_transfers"
DROP INDEX "portfoliotransfer_company_id";
-- reverse: create "portfolio_transfers" table
DROP TABLE "portfolio_transfers";
