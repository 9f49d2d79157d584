-- +goose Up
-- modify "events" table
ALTER TABLE "events" ADD COLUMN "contact_id" uuid NULL, ADD COLUMN "owner_id" uuid NULL, ADD COLUMN "user_scoped" boolean NOT NULL DEFAULT false;
-- create "delegations" table
CREATE TABLE "delegations" ("id" uuid NOT NULL, "valid_until" timestamptz NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, "delegator_id" uuid NOT NULL, "delegate_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "delegations_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION, CONSTRAINT "delegations_users_delegate" FOREIGN KEY ("delegate_id") REFERENCES "users" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION, CONSTRAINT "delegations_users_delegator" FOREIGN KEY ("delegator_id") REFERENCES "users" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "delegation_company_id" to table: "delegations"
CREATE INDEX "delegation_company_id" ON "delegations" ("company_id");
-- create index "delegation_company_id_delegate_id" to table: "delegations"
CREATE INDEX "delegation_company_id_delegate_id" ON "delegations" ("company_id", "delegate_id");
-- create index "delegation_company_id_delegator_id_delegate_id" to table: "delegations"
CREATE UNIQUE INDEX "delegation_company_id_delegator_id_delegate_id" ON "delegations" ("company_id", "delegator_id", "delegate_id");

-- +goose Down
-- reverse: create index "delegation_company_id_delegator_id_delegate_id" to table: "delegations"
DROP INDEX "delegation_company_id_delegator_id_delegate_id";
-- reverse: create index "delegation_company_id_delegate_id" to table: "delegations"
DROP INDEX "delegation_company_id_delegate_id";
-- reverse: create index "delegation_company_id" to table: "delegations"
DROP INDEX "delegation_company_id";
-- reverse: create "delegations" table
DROP TABLE "delegations";
-- reverse: modify "events" table
ALTER TABLE "events" DROP COLUMN "user_scoped", DROP COLUMN "owner_id", DROP COLUMN "contact_id";
