-- +goose Up
-- create "contact_activities" table
CREATE TABLE "contact_activities" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "external_references" jsonb NULL, "contact_id" uuid NOT NULL, "kind" character varying NOT NULL, "event" character varying NOT NULL DEFAULT '', "content" character varying NOT NULL DEFAULT '', "occurred_at" timestamptz NOT NULL, "author_id" uuid NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_activities_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactactivity_company_id" to table: "contact_activities"
CREATE INDEX "contactactivity_company_id" ON "contact_activities" ("company_id");
-- create index "contactactivity_company_id_contact_id_occurred_at_id" to table: "contact_activities"
CREATE INDEX "contactactivity_company_id_contact_id_occurred_at_id" ON "contact_activities" ("company_id", "contact_id", "occurred_at", "id");
-- create "contact_finances" table
CREATE TABLE "contact_finances" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "income" jsonb NOT NULL, "expenses" jsonb NOT NULL, "assets" jsonb NOT NULL, "liabilities" jsonb NOT NULL, "real_estate" jsonb NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_finances_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactfinance_company_id" to table: "contact_finances"
CREATE INDEX "contactfinance_company_id" ON "contact_finances" ("company_id");
-- create index "contactfinance_company_id_contact_id" to table: "contact_finances"
CREATE UNIQUE INDEX "contactfinance_company_id_contact_id" ON "contact_finances" ("company_id", "contact_id");
-- create "contact_relationships" table
CREATE TABLE "contact_relationships" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "contact_id" uuid NOT NULL, "related_contact_id" uuid NOT NULL, "role" character varying NOT NULL, "position" character varying NOT NULL DEFAULT '', "pair_id" uuid NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contact_relationships_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contactrelationship_company_id" to table: "contact_relationships"
CREATE INDEX "contactrelationship_company_id" ON "contact_relationships" ("company_id");
-- create index "contactrelationship_company_id_be1978c1c74adba57c0bafa618f4a974" to table: "contact_relationships"
CREATE UNIQUE INDEX "contactrelationship_company_id_be1978c1c74adba57c0bafa618f4a974" ON "contact_relationships" ("company_id", "contact_id", "related_contact_id", "role");
-- create index "contactrelationship_company_id_pair_id" to table: "contact_relationships"
CREATE INDEX "contactrelationship_company_id_pair_id" ON "contact_relationships" ("company_id", "pair_id");
-- create index "contactrelationship_company_id_related_contact_id" to table: "contact_relationships"
CREATE INDEX "contactrelationship_company_id_related_contact_id" ON "contact_relationships" ("company_id", "related_contact_id");

-- +goose Down
-- reverse: create index "contactrelationship_company_id_related_contact_id" to table: "contact_relationships"
DROP INDEX "contactrelationship_company_id_related_contact_id";
-- reverse: create index "contactrelationship_company_id_pair_id" to table: "contact_relationships"
DROP INDEX "contactrelationship_company_id_pair_id";
-- reverse: create index "contactrelationship_company_id_be1978c1c74adba57c0bafa618f4a974" to table: "contact_relationships"
DROP INDEX "contactrelationship_company_id_be1978c1c74adba57c0bafa618f4a974";
-- reverse: create index "contactrelationship_company_id" to table: "contact_relationships"
DROP INDEX "contactrelationship_company_id";
-- reverse: create "contact_relationships" table
DROP TABLE "contact_relationships";
-- reverse: create index "contactfinance_company_id_contact_id" to table: "contact_finances"
DROP INDEX "contactfinance_company_id_contact_id";
-- reverse: create index "contactfinance_company_id" to table: "contact_finances"
DROP INDEX "contactfinance_company_id";
-- reverse: create "contact_finances" table
DROP TABLE "contact_finances";
-- reverse: create index "contactactivity_company_id_contact_id_occurred_at_id" to table: "contact_activities"
DROP INDEX "contactactivity_company_id_contact_id_occurred_at_id";
-- reverse: create index "contactactivity_company_id" to table: "contact_activities"
DROP INDEX "contactactivity_company_id";
-- reverse: create "contact_activities" table
DROP TABLE "contact_activities";
