-- +goose Up
-- modify "lead_attachments" table
ALTER TABLE "lead_attachments" ALTER COLUMN "lead_id" DROP NOT NULL;
-- create index "leadattachment_company_id_contact_id" to table: "lead_attachments"
CREATE INDEX "leadattachment_company_id_contact_id" ON "lead_attachments" ("company_id", "contact_id");
-- modify "leads" table
ALTER TABLE "leads" ADD COLUMN "origin" character varying NOT NULL DEFAULT 'api';

-- +goose Down
-- reverse: modify "leads" table
ALTER TABLE "leads" DROP COLUMN "origin";
-- reverse: create index "leadattachment_company_id_contact_id" to table: "lead_attachments"
DROP INDEX "leadattachment_company_id_contact_id";
-- reverse: modify "lead_attachments" table
ALTER TABLE "lead_attachments" ALTER COLUMN "lead_id" SET NOT NULL;
