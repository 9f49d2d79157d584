-- +goose Up
-- modify "documents" table
ALTER TABLE "documents" ADD COLUMN "signature_fields" jsonb NULL;
-- create "advice_records" table
CREATE TABLE "advice_records" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "contract_id" uuid NULL, "advisor_id" uuid NULL, "consulted_at" timestamptz NOT NULL, "channel" character varying NOT NULL DEFAULT 'in_person', "subject" character varying NOT NULL, "customer_wishes" text NOT NULL DEFAULT '', "customer_needs" text NOT NULL DEFAULT '', "advice" text NOT NULL DEFAULT '', "reasons" text NOT NULL DEFAULT '', "products" jsonb NOT NULL, "advice_waived" boolean NOT NULL DEFAULT false, "notes" text NOT NULL DEFAULT '', "status" character varying NOT NULL DEFAULT 'draft', "locked_at" timestamptz NULL, "document_id" uuid NULL, "creator_id" uuid NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "advice_records_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "advicerecord_company_id" to table: "advice_records"
CREATE INDEX "advicerecord_company_id" ON "advice_records" ("company_id");
-- create index "advicerecord_company_id_contact_id" to table: "advice_records"
CREATE INDEX "advicerecord_company_id_contact_id" ON "advice_records" ("company_id", "contact_id");
-- create index "advicerecord_company_id_created_at_id" to table: "advice_records"
CREATE INDEX "advicerecord_company_id_created_at_id" ON "advice_records" ("company_id", "created_at", "id");
-- create index "advicerecord_company_id_document_id" to table: "advice_records"
CREATE INDEX "advicerecord_company_id_document_id" ON "advice_records" ("company_id", "document_id");
-- create index "advicerecord_company_id_updated_at" to table: "advice_records"
CREATE INDEX "advicerecord_company_id_updated_at" ON "advice_records" ("company_id", "updated_at");
-- create "document_templates" table
CREATE TABLE "document_templates" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "category" character varying NOT NULL, "body" text NOT NULL, "placeholders" jsonb NOT NULL, "signature_roles" jsonb NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "document_templates_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "documenttemplate_company_id" to table: "document_templates"
CREATE INDEX "documenttemplate_company_id" ON "document_templates" ("company_id");
-- create index "documenttemplate_company_id_name" to table: "document_templates"
CREATE UNIQUE INDEX "documenttemplate_company_id_name" ON "document_templates" ("company_id", "name");
-- create "signature_requests" table
CREATE TABLE "signature_requests" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "provider" character varying NOT NULL DEFAULT 'builtin', "status" character varying NOT NULL DEFAULT 'pending', "title" character varying NOT NULL, "message" text NOT NULL DEFAULT '', "documents" jsonb NOT NULL, "fields" jsonb NOT NULL, "source_blob_key" character varying NOT NULL, "source_sha256" character varying NOT NULL, "page_count" bigint NOT NULL, "mailbox_id" uuid NULL, "expires_at" timestamptz NOT NULL, "completed_at" timestamptz NULL, "cancelled_at" timestamptz NULL, "signed_document_id" uuid NULL, "creator_id" uuid NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "signature_requests_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "signaturerequest_company_id" to table: "signature_requests"
CREATE INDEX "signaturerequest_company_id" ON "signature_requests" ("company_id");
-- create index "signaturerequest_company_id_contact_id" to table: "signature_requests"
CREATE INDEX "signaturerequest_company_id_contact_id" ON "signature_requests" ("company_id", "contact_id");
-- create index "signaturerequest_company_id_created_at_id" to table: "signature_requests"
CREATE INDEX "signaturerequest_company_id_created_at_id" ON "signature_requests" ("company_id", "created_at", "id");
-- create index "signaturerequest_company_id_updated_at" to table: "signature_requests"
CREATE INDEX "signaturerequest_company_id_updated_at" ON "signature_requests" ("company_id", "updated_at");
-- create index "signaturerequest_status_expires_at" to table: "signature_requests"
CREATE INDEX "signaturerequest_status_expires_at" ON "signature_requests" ("status", "expires_at");
-- create "signature_signers" table
CREATE TABLE "signature_signers" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "request_id" uuid NOT NULL, "contact_id" uuid NOT NULL, "position" bigint NOT NULL, "role" character varying NOT NULL, "user_id" uuid NULL, "name" character varying NOT NULL, "email" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'pending', "token_hash" bytea NOT NULL, "code_hash" bytea NULL, "code_expires_at" timestamptz NULL, "code_attempts" bigint NOT NULL DEFAULT 0, "code_sent_at" timestamptz NULL, "notified_at" timestamptz NULL, "reminded_at" timestamptz NULL, "viewed_at" timestamptz NULL, "verified_at" timestamptz NULL, "signed_at" timestamptz NULL, "signed_ip" character varying NOT NULL DEFAULT '', "signed_user_agent" character varying NOT NULL DEFAULT '', "signature" bytea NULL, "typed_name" character varying NOT NULL DEFAULT '', "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "signature_signers_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "signaturesigner_company_id" to table: "signature_signers"
CREATE INDEX "signaturesigner_company_id" ON "signature_signers" ("company_id");
-- create index "signaturesigner_company_id_request_id_position" to table: "signature_signers"
CREATE UNIQUE INDEX "signaturesigner_company_id_request_id_position" ON "signature_signers" ("company_id", "request_id", "position");
-- create "standard_documents" table
CREATE TABLE "standard_documents" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "filename" character varying NOT NULL, "content" bytea NOT NULL, "size" bigint NOT NULL, "sha256" character varying NOT NULL, "signature_fields" jsonb NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "standard_documents_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "standarddocument_company_id" to table: "standard_documents"
CREATE INDEX "standarddocument_company_id" ON "standard_documents" ("company_id");
-- create index "standarddocument_company_id_name" to table: "standard_documents"
CREATE UNIQUE INDEX "standarddocument_company_id_name" ON "standard_documents" ("company_id", "name");

-- +goose Down
-- reverse: create index "standarddocument_company_id_name" to table: "standard_documents"
DROP INDEX "standarddocument_company_id_name";
-- reverse: create index "standarddocument_company_id" to table: "standard_documents"
DROP INDEX "standarddocument_company_id";
-- reverse: create "standard_documents" table
DROP TABLE "standard_documents";
-- reverse: create index "signaturesigner_company_id_request_id_position" to table: "signature_signers"
DROP INDEX "signaturesigner_company_id_request_id_position";
-- reverse: create index "signaturesigner_company_id" to table: "signature_signers"
DROP INDEX "signaturesigner_company_id";
-- reverse: create "signature_signers" table
DROP TABLE "signature_signers";
-- reverse: create index "signaturerequest_status_expires_at" to table: "signature_requests"
DROP INDEX "signaturerequest_status_expires_at";
-- reverse: create index "signaturerequest_company_id_updated_at" to table: "signature_requests"
DROP INDEX "signaturerequest_company_id_updated_at";
-- reverse: create index "signaturerequest_company_id_created_at_id" to table: "signature_requests"
DROP INDEX "signaturerequest_company_id_created_at_id";
-- reverse: create index "signaturerequest_company_id_contact_id" to table: "signature_requests"
DROP INDEX "signaturerequest_company_id_contact_id";
-- reverse: create index "signaturerequest_company_id" to table: "signature_requests"
DROP INDEX "signaturerequest_company_id";
-- reverse: create "signature_requests" table
DROP TABLE "signature_requests";
-- reverse: create index "documenttemplate_company_id_name" to table: "document_templates"
DROP INDEX "documenttemplate_company_id_name";
-- reverse: create index "documenttemplate_company_id" to table: "document_templates"
DROP INDEX "documenttemplate_company_id";
-- reverse: create "document_templates" table
DROP TABLE "document_templates";
-- reverse: create index "advicerecord_company_id_updated_at" to table: "advice_records"
DROP INDEX "advicerecord_company_id_updated_at";
-- reverse: create index "advicerecord_company_id_document_id" to table: "advice_records"
DROP INDEX "advicerecord_company_id_document_id";
-- reverse: create index "advicerecord_company_id_created_at_id" to table: "advice_records"
DROP INDEX "advicerecord_company_id_created_at_id";
-- reverse: create index "advicerecord_company_id_contact_id" to table: "advice_records"
DROP INDEX "advicerecord_company_id_contact_id";
-- reverse: create index "advicerecord_company_id" to table: "advice_records"
DROP INDEX "advicerecord_company_id";
-- reverse: create "advice_records" table
DROP TABLE "advice_records";
-- reverse: modify "documents" table
ALTER TABLE "documents" DROP COLUMN "signature_fields";
