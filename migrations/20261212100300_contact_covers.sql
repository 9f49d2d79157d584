-- +goose Up
-- create "contact_covers" table
CREATE TABLE "contact_covers" ("id" uuid NOT NULL, "owner_id" uuid NULL, "contact_type" character varying NOT NULL, "covers" jsonb NOT NULL, "active_contracts" bigint NOT NULL DEFAULT 0, "score" bigint NOT NULL DEFAULT 0, "gaps" character varying NOT NULL DEFAULT '', "rank" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_covers_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactcover_company_id" to table: "contact_covers"
CREATE INDEX "contactcover_company_id" ON "contact_covers" ("company_id");

-- +goose Down
-- reverse: create index "contactcover_company_id" to table: "contact_covers"
DROP INDEX "contactcover_company_id";
-- reverse: create "contact_covers" table
DROP TABLE "contact_covers";
