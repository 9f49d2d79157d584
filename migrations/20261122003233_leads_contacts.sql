-- +goose Up
-- modify "companies" table
ALTER TABLE "companies" ADD COLUMN "lead_rules" jsonb NOT NULL;
-- create "contact_phones" table
CREATE TABLE "contact_phones" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "contact_id" uuid NOT NULL, "number" character varying NOT NULL, "number_key" character varying NOT NULL DEFAULT '', "type" character varying NOT NULL DEFAULT 'other', "is_primary" boolean NOT NULL DEFAULT false, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_phones_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactphone_company_id" to table: "contact_phones"
CREATE INDEX "contactphone_company_id" ON "contact_phones" ("company_id");
-- create index "contactphone_company_id_contact_id" to table: "contact_phones"
CREATE INDEX "contactphone_company_id_contact_id" ON "contact_phones" ("company_id", "contact_id");
-- create index "contactphone_company_id_number_key" to table: "contact_phones"
CREATE INDEX "contactphone_company_id_number_key" ON "contact_phones" ("company_id", "number_key");
-- create "contacts" table
CREATE TABLE "contacts" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "external_references" jsonb NULL, "type" character varying NOT NULL, "first_name" character varying NOT NULL DEFAULT '', "last_name" character varying NOT NULL DEFAULT '', "company_name" character varying NOT NULL DEFAULT '', "email" character varying NULL, "email_key" character varying NULL, "owner_id" uuid NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contacts_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contact_company_id" to table: "contacts"
CREATE INDEX "contact_company_id" ON "contacts" ("company_id");
-- create index "contact_company_id_created_at_id" to table: "contacts"
CREATE INDEX "contact_company_id_created_at_id" ON "contacts" ("company_id", "created_at", "id");
-- create index "contact_company_id_email_key" to table: "contacts"
CREATE INDEX "contact_company_id_email_key" ON "contacts" ("company_id", "email_key");
-- create "lead_attachments" table
CREATE TABLE "lead_attachments" ("id" uuid NOT NULL, "lead_id" uuid NOT NULL, "contact_id" uuid NULL, "filename" character varying NOT NULL, "content_type" character varying NOT NULL, "size" bigint NOT NULL, "content" bytea NOT NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "lead_attachments_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "leadattachment_company_id" to table: "lead_attachments"
CREATE INDEX "leadattachment_company_id" ON "lead_attachments" ("company_id");
-- create index "leadattachment_company_id_lead_id" to table: "lead_attachments"
CREATE INDEX "leadattachment_company_id_lead_id" ON "lead_attachments" ("company_id", "lead_id");
-- create "lead_stages" table
CREATE TABLE "lead_stages" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "key" character varying NOT NULL, "name" character varying NOT NULL, "color" character varying NOT NULL DEFAULT '', "position" bigint NOT NULL DEFAULT 0, "is_final" boolean NOT NULL DEFAULT false, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "lead_stages_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "leadstage_company_id" to table: "lead_stages"
CREATE INDEX "leadstage_company_id" ON "lead_stages" ("company_id");
-- create index "leadstage_company_id_key" to table: "lead_stages"
CREATE UNIQUE INDEX "leadstage_company_id_key" ON "lead_stages" ("company_id", "key");
-- create "lead_submissions" table
CREATE TABLE "lead_submissions" ("id" uuid NOT NULL, "lead_id" uuid NOT NULL, "received_at" timestamptz NOT NULL, "channel" character varying NOT NULL, "outcome" character varying NOT NULL, "credential_id" uuid NULL, "payload" jsonb NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "lead_submissions_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "leadsubmission_company_id" to table: "lead_submissions"
CREATE INDEX "leadsubmission_company_id" ON "lead_submissions" ("company_id");
-- create index "leadsubmission_company_id_lead_id_received_at" to table: "lead_submissions"
CREATE INDEX "leadsubmission_company_id_lead_id_received_at" ON "lead_submissions" ("company_id", "lead_id", "received_at");
-- create "leads" table
CREATE TABLE "leads" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "external_references" jsonb NULL, "first_name" character varying NOT NULL DEFAULT '', "last_name" character varying NOT NULL DEFAULT '', "email" character varying NULL, "email_key" character varying NULL, "phone" character varying NULL, "phone_key" character varying NULL, "source" character varying NULL, "notes" text NOT NULL DEFAULT '', "additional_fields" jsonb NOT NULL, "meta_url" character varying NULL, "stage_id" uuid NOT NULL, "owner_id" uuid NULL, "converted" boolean NOT NULL DEFAULT false, "converted_at" timestamptz NULL, "contact_id" uuid NULL, "test" boolean NOT NULL DEFAULT false, "submissions" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "leads_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "lead_company_id" to table: "leads"
CREATE INDEX "lead_company_id" ON "leads" ("company_id");
-- create index "lead_company_id_created_at_id" to table: "leads"
CREATE INDEX "lead_company_id_created_at_id" ON "leads" ("company_id", "created_at", "id");
-- create index "lead_company_id_email_key" to table: "leads"
CREATE INDEX "lead_company_id_email_key" ON "leads" ("company_id", "email_key");
-- create index "lead_company_id_phone_key" to table: "leads"
CREATE INDEX "lead_company_id_phone_key" ON "leads" ("company_id", "phone_key");
-- create index "lead_company_id_stage_id" to table: "leads"
CREATE INDEX "lead_company_id_stage_id" ON "leads" ("company_id", "stage_id");
-- create index "lead_company_id_updated_at_id" to table: "leads"
CREATE INDEX "lead_company_id_updated_at_id" ON "leads" ("company_id", "updated_at", "id");

-- +goose Down
-- reverse: create index "lead_company_id_updated_at_id" to table: "leads"
DROP INDEX "lead_company_id_updated_at_id";
-- reverse: create index "lead_company_id_stage_id" to table: "leads"
DROP INDEX "lead_company_id_stage_id";
-- reverse: create index "lead_company_id_phone_key" to table: "leads"
DROP INDEX "lead_company_id_phone_key";
-- reverse: create index "lead_company_id_email_key" to table: "leads"
DROP INDEX "lead_company_id_email_key";
-- reverse: create index "lead_company_id_created_at_id" to table: "leads"
DROP INDEX "lead_company_id_created_at_id";
-- reverse: create index "lead_company_id" to table: "leads"
DROP INDEX "lead_company_id";
-- reverse: create "leads" table
DROP TABLE "leads";
-- reverse: create index "leadsubmission_company_id_lead_id_received_at" to table: "lead_submissions"
DROP INDEX "leadsubmission_company_id_lead_id_received_at";
-- reverse: create index "leadsubmission_company_id" to table: "lead_submissions"
DROP INDEX "leadsubmission_company_id";
-- reverse: create "lead_submissions" table
DROP TABLE "lead_submissions";
-- reverse: create index "leadstage_company_id_key" to table: "lead_stages"
DROP INDEX "leadstage_company_id_key";
-- reverse: create index "leadstage_company_id" to table: "lead_stages"
DROP INDEX "leadstage_company_id";
-- reverse: create "lead_stages" table
DROP TABLE "lead_stages";
-- reverse: create index "leadattachment_company_id_lead_id" to table: "lead_attachments"
DROP INDEX "leadattachment_company_id_lead_id";
-- reverse: create index "leadattachment_company_id" to table: "lead_attachments"
DROP INDEX "leadattachment_company_id";
-- reverse: create "lead_attachments" table
DROP TABLE "lead_attachments";
-- reverse: create index "contact_company_id_email_key" to table: "contacts"
DROP INDEX "contact_company_id_email_key";
-- reverse: create index "contact_company_id_created_at_id" to table: "contacts"
DROP INDEX "contact_company_id_created_at_id";
-- reverse: create index "contact_company_id" to table: "contacts"
DROP INDEX "contact_company_id";
-- reverse: create "contacts" table
DROP TABLE "contacts";
-- reverse: create index "contactphone_company_id_number_key" to table: "contact_phones"
DROP INDEX "contactphone_company_id_number_key";
-- reverse: create index "contactphone_company_id_contact_id" to table: "contact_phones"
DROP INDEX "contactphone_company_id_contact_id";
-- reverse: create index "contactphone_company_id" to table: "contact_phones"
DROP INDEX "contactphone_company_id";
-- reverse: create "contact_phones" table
DROP TABLE "contact_phones";
-- reverse: modify "companies" table
ALTER TABLE "companies" DROP COLUMN "lead_rules";
