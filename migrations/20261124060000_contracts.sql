-- +goose Up
-- create "insurers" table
CREATE TABLE "insurers" ("id" uuid NOT NULL, "vu_number" character varying NOT NULL, "name" character varying NOT NULL, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create index "insurer_vu_number" to table: "insurers"
CREATE UNIQUE INDEX "insurer_vu_number" ON "insurers" ("vu_number");
-- create "contracts" table
CREATE TABLE "contracts" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "external_references" jsonb NULL, "contact_id" uuid NOT NULL, "insurer_id" uuid NOT NULL, "policy_number" character varying NOT NULL, "type" character varying NOT NULL, "status" character varying NOT NULL, "status_code" character varying NOT NULL DEFAULT '', "start_date" date NULL, "end_date" date NULL, "main_renewal_date" date NULL, "premium" numeric(14,2) NULL, "payment_frequency" character varying NULL, "annual_premium" numeric(14,2) NULL, "owner_id" uuid NULL, "source" jsonb NULL, "details" jsonb NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "contracts_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "contract_company_id" to table: "contracts"
CREATE INDEX "contract_company_id" ON "contracts" ("company_id");
-- create index "contract_company_id_contact_id" to table: "contracts"
CREATE INDEX "contract_company_id_contact_id" ON "contracts" ("company_id", "contact_id");
-- create index "contract_company_id_created_at_id" to table: "contracts"
CREATE INDEX "contract_company_id_created_at_id" ON "contracts" ("company_id", "created_at", "id");
-- create index "contract_company_id_insurer_id_policy_number_type" to table: "contracts"
CREATE UNIQUE INDEX "contract_company_id_insurer_id_policy_number_type" ON "contracts" ("company_id", "insurer_id", "policy_number", "type");
-- create index "contract_company_id_updated_at_id" to table: "contracts"
CREATE INDEX "contract_company_id_updated_at_id" ON "contracts" ("company_id", "updated_at", "id");

-- +goose Down
-- reverse: create index "contract_company_id_updated_at_id" to table: "contracts"
DROP INDEX "contract_company_id_updated_at_id";
-- reverse: create index "contract_company_id_insurer_id_policy_number_type" to table: "contracts"
DROP INDEX "contract_company_id_insurer_id_policy_number_type";
-- reverse: create index "contract_company_id_created_at_id" to table: "contracts"
DROP INDEX "contract_company_id_created_at_id";
-- reverse: create index "contract_company_id_contact_id" to table: "contracts"
DROP INDEX "contract_company_id_contact_id";
-- reverse: create index "contract_company_id" to table: "contracts"
DROP INDEX "contract_company_id";
-- reverse: create "contracts" table
DROP TABLE "contracts";
-- reverse: create index "insurer_vu_number" to table: "insurers"
DROP INDEX "insurer_vu_number";
-- reverse: create "insurers" table
DROP TABLE "insurers";
