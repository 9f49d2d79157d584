-- +goose Up
-- (edited: the jsonb columns got defaults so that existing contacts take them)
-- modify "contacts" table
ALTER TABLE "contacts" ADD COLUMN "tags" jsonb NOT NULL DEFAULT '[]', ADD COLUMN "labels" jsonb NOT NULL DEFAULT '[]', ADD COLUMN "custom_fields" jsonb NOT NULL DEFAULT '{}', ADD COLUMN "groups" jsonb NOT NULL DEFAULT '{}', ADD COLUMN "sensitive" jsonb NOT NULL DEFAULT '{}', ADD COLUMN "search_text" text NOT NULL DEFAULT '', ADD COLUMN "sort_name" character varying NOT NULL DEFAULT '';
-- (edited) the defaults filled existing rows; ent writes every value itself
ALTER TABLE "contacts" ALTER COLUMN "tags" DROP DEFAULT, ALTER COLUMN "labels" DROP DEFAULT, ALTER COLUMN "custom_fields" DROP DEFAULT, ALTER COLUMN "groups" DROP DEFAULT, ALTER COLUMN "sensitive" DROP DEFAULT;
-- create index "contact_company_id_sort_name_id" to table: "contacts"
CREATE INDEX "contact_company_id_sort_name_id" ON "contacts" ("company_id", "sort_name", "id");
-- create index "contact_company_id_updated_at_id" to table: "contacts"
CREATE INDEX "contact_company_id_updated_at_id" ON "contacts" ("company_id", "updated_at", "id");
-- create "custom_field_definitions" table
CREATE TABLE "custom_field_definitions" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "key" character varying NOT NULL, "label" character varying NOT NULL, "data_type" character varying NOT NULL, "options" jsonb NOT NULL, "position" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "custom_field_definitions_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "customfielddefinition_company_id" to table: "custom_field_definitions"
CREATE INDEX "customfielddefinition_company_id" ON "custom_field_definitions" ("company_id");
-- create index "customfielddefinition_company_id_key" to table: "custom_field_definitions"
CREATE UNIQUE INDEX "customfielddefinition_company_id_key" ON "custom_field_definitions" ("company_id", "key");

-- +goose Down
-- reverse: create index "customfielddefinition_company_id_key" to table: "custom_field_definitions"
DROP INDEX "customfielddefinition_company_id_key";
-- reverse: create index "customfielddefinition_company_id" to table: "custom_field_definitions"
DROP INDEX "customfielddefinition_company_id";
-- reverse: create "custom_field_definitions" table
DROP TABLE "custom_field_definitions";
-- reverse: create index "contact_company_id_updated_at_id" to table: "contacts"
DROP INDEX "contact_company_id_updated_at_id";
-- reverse: create index "contact_company_id_sort_name_id" to table: "contacts"
DROP INDEX "contact_company_id_sort_name_id";
-- reverse: modify "contacts" table
ALTER TABLE "contacts" DROP COLUMN "sort_name", DROP COLUMN "search_text", DROP COLUMN "sensitive", DROP COLUMN "groups", DROP COLUMN "custom_fields", DROP COLUMN "labels", DROP COLUMN "tags";
