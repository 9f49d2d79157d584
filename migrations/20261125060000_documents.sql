-- +goose Up
-- create "documents" table
CREATE TABLE "documents" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "contract_id" uuid NULL, "type" character varying NOT NULL DEFAULT 'other', "filename" character varying NOT NULL, "content_type" character varying NOT NULL, "size" bigint NOT NULL, "sha256" character varying NOT NULL, "blob_key" character varying NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "documents_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "document_blob_key" to table: "documents"
CREATE UNIQUE INDEX "document_blob_key" ON "documents" ("blob_key");
-- create index "document_company_id" to table: "documents"
CREATE INDEX "document_company_id" ON "documents" ("company_id");
-- create index "document_company_id_contact_id_created_at" to table: "documents"
CREATE INDEX "document_company_id_contact_id_created_at" ON "documents" ("company_id", "contact_id", "created_at");
-- create index "document_company_id_contract_id" to table: "documents"
CREATE INDEX "document_company_id_contract_id" ON "documents" ("company_id", "contract_id");

-- +goose Down
-- reverse: create index "document_company_id_contract_id" to table: "documents"
DROP INDEX "document_company_id_contract_id";
-- reverse: create index "document_company_id_contact_id_created_at" to table: "documents"
DROP INDEX "document_company_id_contact_id_created_at";
-- reverse: create index "document_company_id" to table: "documents"
DROP INDEX "document_company_id";
-- reverse: create index "document_blob_key" to table: "documents"
DROP INDEX "document_blob_key";
-- reverse: create "documents" table
DROP TABLE "documents";
