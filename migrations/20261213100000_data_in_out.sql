-- +goose Up
-- modify "point_entries" table
ALTER TABLE "point_entries" ADD COLUMN "extraction_id" uuid NULL;
-- create "contact_import_rows" table
CREATE TABLE "contact_import_rows" ("id" uuid NOT NULL, "import_id" uuid NOT NULL, "creator_id" uuid NULL, "row" bigint NOT NULL, "cells" jsonb NOT NULL, "analysis" character varying NOT NULL, "outcome" character varying NULL, "contact_id" uuid NULL, "duplicate_row" bigint NULL, "errors" jsonb NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_import_rows_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactimportrow_company_id" to table: "contact_import_rows"
CREATE INDEX "contactimportrow_company_id" ON "contact_import_rows" ("company_id");
-- create index "contactimportrow_company_id_contact_id" to table: "contact_import_rows"
CREATE INDEX "contactimportrow_company_id_contact_id" ON "contact_import_rows" ("company_id", "contact_id");
-- create index "contactimportrow_company_id_import_id_row" to table: "contact_import_rows"
CREATE UNIQUE INDEX "contactimportrow_company_id_import_id_row" ON "contact_import_rows" ("company_id", "import_id", "row");
-- create "contact_imports" table
CREATE TABLE "contact_imports" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "status" character varying NOT NULL DEFAULT 'queued', "format" character varying NOT NULL, "contact_type" character varying NOT NULL, "filename" character varying NOT NULL, "size" bigint NOT NULL, "sha256" character varying NOT NULL, "blob_key" character varying NOT NULL, "encoding" character varying NOT NULL DEFAULT '', "delimiter" character varying NOT NULL DEFAULT '', "headers" jsonb NULL, "mapping" jsonb NULL, "suggested_mapping" jsonb NULL, "tags" jsonb NULL, "owner_id" uuid NULL, "creator_id" uuid NULL, "duplicates" character varying NULL, "row_count" bigint NOT NULL DEFAULT 0, "counts" jsonb NULL, "committed" bigint NOT NULL DEFAULT 0, "error" character varying NOT NULL DEFAULT '', "analyzed_at" timestamptz NULL, "committed_at" timestamptz NULL, "completed_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_imports_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactimport_company_id" to table: "contact_imports"
CREATE INDEX "contactimport_company_id" ON "contact_imports" ("company_id");
-- create index "contactimport_company_id_created_at_id" to table: "contact_imports"
CREATE INDEX "contactimport_company_id_created_at_id" ON "contact_imports" ("company_id", "created_at", "id");
-- create index "contactimport_company_id_status" to table: "contact_imports"
CREATE INDEX "contactimport_company_id_status" ON "contact_imports" ("company_id", "status");
-- create "contract_extractions" table
CREATE TABLE "contract_extractions" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "status" character varying NOT NULL DEFAULT 'queued', "document_id" uuid NOT NULL, "contact_id" uuid NOT NULL, "contract_id" uuid NULL, "contract_version" bigint NULL, "contract_type" character varying NULL, "auto_apply" boolean NOT NULL DEFAULT false, "method" character varying NOT NULL DEFAULT '', "pages" bigint NOT NULL DEFAULT 0, "fields" jsonb NULL, "points" bigint NOT NULL DEFAULT 0, "error" character varying NOT NULL DEFAULT '', "creator_id" uuid NULL, "completed_at" timestamptz NULL, "applied_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contract_extractions_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contractextraction_company_id" to table: "contract_extractions"
CREATE INDEX "contractextraction_company_id" ON "contract_extractions" ("company_id");
-- create index "contractextraction_company_id_created_at_id" to table: "contract_extractions"
CREATE INDEX "contractextraction_company_id_created_at_id" ON "contract_extractions" ("company_id", "created_at", "id");
-- create index "contractextraction_company_id_document_id" to table: "contract_extractions"
CREATE INDEX "contractextraction_company_id_document_id" ON "contract_extractions" ("company_id", "document_id");
-- create "privacy_requests" table
CREATE TABLE "privacy_requests" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "type" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'queued', "contact_id" uuid NOT NULL, "owner_id" uuid NULL, "creator_id" uuid NULL, "reason" character varying NULL, "requested_at" timestamptz NOT NULL, "blob_key" character varying NULL, "size" bigint NULL, "download_token_hash" character varying NULL, "expires_at" timestamptz NULL, "summary" jsonb NULL, "error" character varying NOT NULL DEFAULT '', "completed_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "privacy_requests_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "privacyrequest_company_id" to table: "privacy_requests"
CREATE INDEX "privacyrequest_company_id" ON "privacy_requests" ("company_id");
-- create index "privacyrequest_company_id_contact_id" to table: "privacy_requests"
CREATE INDEX "privacyrequest_company_id_contact_id" ON "privacy_requests" ("company_id", "contact_id");
-- create index "privacyrequest_company_id_created_at_id" to table: "privacy_requests"
CREATE INDEX "privacyrequest_company_id_created_at_id" ON "privacy_requests" ("company_id", "created_at", "id");
-- create index "privacyrequest_download_token_hash" to table: "privacy_requests"
CREATE UNIQUE INDEX "privacyrequest_download_token_hash" ON "privacy_requests" ("download_token_hash");
-- create "retained_records" table
CREATE TABLE "retained_records" ("id" uuid NOT NULL, "request_id" uuid NOT NULL, "contact_id" uuid NOT NULL, "record_type" character varying NOT NULL, "record_id" uuid NOT NULL, "basis" character varying NOT NULL, "data" jsonb NOT NULL, "blob_keys" jsonb NULL, "retain_until" date NOT NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "retained_records_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "retainedrecord_company_id" to table: "retained_records"
CREATE INDEX "retainedrecord_company_id" ON "retained_records" ("company_id");
-- create index "retainedrecord_company_id_contact_id" to table: "retained_records"
CREATE INDEX "retainedrecord_company_id_contact_id" ON "retained_records" ("company_id", "contact_id");
-- create index "retainedrecord_retain_until" to table: "retained_records"
CREATE INDEX "retainedrecord_retain_until" ON "retained_records" ("retain_until");

-- +goose Down
-- reverse: create index "retainedrecord_retain_until" to table: "retained_records"
DROP INDEX "retainedrecord_retain_until";
-- reverse: create index "retainedrecord_company_id_contact_id" to table: "retained_records"
DROP INDEX "retainedrecord_company_id_contact_id";
-- reverse: create index "retainedrecord_company_id" to table: "retained_records"
DROP INDEX "retainedrecord_company_id";
-- reverse: create "retained_records" table
DROP TABLE "retained_records";
-- reverse: create index "privacyrequest_download_token_hash" to table: "privacy_requests"
DROP INDEX "privacyrequest_download_token_hash";
-- reverse: create index "privacyrequest_company_id_created_at_id" to table: "privacy_requests"
DROP INDEX "privacyrequest_company_id_created_at_id";
-- reverse: create index "privacyrequest_company_id_contact_id" to table: "privacy_requests"
DROP INDEX "privacyrequest_company_id_contact_id";
-- reverse: create index "privacyrequest_company_id" to table: "privacy_requests"
DROP INDEX "privacyrequest_company_id";
-- reverse: create "privacy_requests" table
DROP TABLE "privacy_requests";
-- reverse: create index "contractextraction_company_id_document_id" to table: "contract_extractions"
DROP INDEX "contractextraction_company_id_document_id";
-- reverse: create index "contractextraction_company_id_created_at_id" to table: "contract_extractions"
DROP INDEX "contractextraction_company_id_created_at_id";
-- reverse: create index "contractextraction_company_id" to table: "contract_extractions"
DROP INDEX "contractextraction_company_id";
-- reverse: create "contract_extractions" table
DROP TABLE "contract_extractions";
-- reverse: create index "contactimport_company_id_status" to table: "contact_imports"
DROP INDEX "contactimport_company_id_status";
-- reverse: create index "contactimport_company_id_created_at_id" to table: "contact_imports"
DROP INDEX "contactimport_company_id_created_at_id";
-- reverse: create index "contactimport_company_id" to table: "contact_imports"
DROP INDEX "contactimport_company_id";
-- reverse: create "contact_imports" table
DROP TABLE "contact_imports";
-- reverse: create index "contactimportrow_company_id_import_id_row" to table: "contact_import_rows"
DROP INDEX "contactimportrow_company_id_import_id_row";
-- reverse: create index "contactimportrow_company_id_contact_id" to table: "contact_import_rows"
DROP INDEX "contactimportrow_company_id_contact_id";
-- reverse: create index "contactimportrow_company_id" to table: "contact_import_rows"
DROP INDEX "contactimportrow_company_id";
-- reverse: create "contact_import_rows" table
DROP TABLE "contact_import_rows";
-- reverse: modify "point_entries" table
ALTER TABLE "point_entries" DROP COLUMN "extraction_id";
