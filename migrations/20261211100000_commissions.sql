-- +goose Up
-- create "commission_entries" table
CREATE TABLE "commission_entries" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "statement_id" uuid NOT NULL, "insurer_id" uuid NULL, "contract_id" uuid NULL, "contact_id" uuid NULL, "policy_number" character varying NOT NULL DEFAULT '', "policy_key" character varying NOT NULL DEFAULT '', "type" character varying NOT NULL, "code" character varying NOT NULL DEFAULT '', "amount" numeric(14,2) NOT NULL, "booked_on" date NOT NULL, "description" character varying NOT NULL DEFAULT '', "note" character varying NULL, "matched_by" character varying NULL, "line" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "commission_entries_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "commissionentry_company_id" to table: "commission_entries"
CREATE INDEX "commissionentry_company_id" ON "commission_entries" ("company_id");
-- create index "commissionentry_company_id_booked_on_id" to table: "commission_entries"
CREATE INDEX "commissionentry_company_id_booked_on_id" ON "commission_entries" ("company_id", "booked_on", "id");
-- create index "commissionentry_company_id_contact_id" to table: "commission_entries"
CREATE INDEX "commissionentry_company_id_contact_id" ON "commission_entries" ("company_id", "contact_id");
-- create index "commissionentry_company_id_contract_id" to table: "commission_entries"
CREATE INDEX "commissionentry_company_id_contract_id" ON "commission_entries" ("company_id", "contract_id");
-- create index "commissionentry_company_id_insurer_id_policy_key" to table: "commission_entries"
CREATE INDEX "commissionentry_company_id_insurer_id_policy_key" ON "commission_entries" ("company_id", "insurer_id", "policy_key");
-- create index "commissionentry_company_id_statement_id_line" to table: "commission_entries"
CREATE INDEX "commissionentry_company_id_statement_id_line" ON "commission_entries" ("company_id", "statement_id", "line");
-- create "commission_liability_rules" table
CREATE TABLE "commission_liability_rules" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "insurer_id" uuid NULL, "contract_type" character varying NOT NULL DEFAULT '', "months" bigint NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "commission_liability_rules_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "commissionliabilityrule_company_id" to table: "commission_liability_rules"
CREATE INDEX "commissionliabilityrule_company_id" ON "commission_liability_rules" ("company_id");
-- create index "commissionliabilityrule_company_id_insurer_id_contract_type" to table: "commission_liability_rules"
CREATE INDEX "commissionliabilityrule_company_id_insurer_id_contract_type" ON "commission_liability_rules" ("company_id", "insurer_id", "contract_type");
-- create "commission_statements" table
CREATE TABLE "commission_statements" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "format" character varying NOT NULL, "status" character varying NOT NULL DEFAULT 'received', "import_status" character varying NOT NULL DEFAULT 'queued', "insurer_id" uuid NULL, "filename" character varying NOT NULL, "size" bigint NOT NULL, "sha256" character varying NOT NULL, "blob_key" character varying NOT NULL, "mapping" jsonb NULL, "period_from" date NULL, "period_to" date NULL, "note" character varying NULL, "entry_count" bigint NOT NULL DEFAULT 0, "matched_count" bigint NOT NULL DEFAULT 0, "total" numeric(16,2) NULL, "issues" jsonb NOT NULL, "error" character varying NOT NULL DEFAULT '', "creator_id" uuid NULL, "processed_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "commission_statements_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "commissionstatement_company_id" to table: "commission_statements"
CREATE INDEX "commissionstatement_company_id" ON "commission_statements" ("company_id");
-- create index "commissionstatement_company_id_created_at_id" to table: "commission_statements"
CREATE INDEX "commissionstatement_company_id_created_at_id" ON "commission_statements" ("company_id", "created_at", "id");
-- create index "commissionstatement_company_id_insurer_id" to table: "commission_statements"
CREATE INDEX "commissionstatement_company_id_insurer_id" ON "commission_statements" ("company_id", "insurer_id");

-- +goose Down
-- reverse: create index "commissionstatement_company_id_insurer_id" to table: "commission_statements"
DROP INDEX "commissionstatement_company_id_insurer_id";
-- reverse: create index "commissionstatement_company_id_created_at_id" to table: "commission_statements"
DROP INDEX "commissionstatement_company_id_created_at_id";
-- reverse: create index "commissionstatement_company_id" to table: "commission_statements"
DROP INDEX "commissionstatement_company_id";
-- reverse: create "commission_statements" table
DROP TABLE "commission_statements";
-- reverse: create index "commissionliabilityrule_company_id_insurer_id_contract_type" to table: "commission_liability_rules"
DROP INDEX "commissionliabilityrule_company_id_insurer_id_contract_type";
-- reverse: create index "commissionliabilityrule_company_id" to table: "commission_liability_rules"
DROP INDEX "commissionliabilityrule_company_id";
-- reverse: create "commission_liability_rules" table
DROP TABLE "commission_liability_rules";
-- reverse: create index "commissionentry_company_id_statement_id_line" to table: "commission_entries"
DROP INDEX "commissionentry_company_id_statement_id_line";
-- reverse: create index "commissionentry_company_id_insurer_id_policy_key" to table: "commission_entries"
DROP INDEX "commissionentry_company_id_insurer_id_policy_key";
-- reverse: create index "commissionentry_company_id_contract_id" to table: "commission_entries"
DROP INDEX "commissionentry_company_id_contract_id";
-- reverse: create index "commissionentry_company_id_contact_id" to table: "commission_entries"
DROP INDEX "commissionentry_company_id_contact_id";
-- reverse: create index "commissionentry_company_id_booked_on_id" to table: "commission_entries"
DROP INDEX "commissionentry_company_id_booked_on_id";
-- reverse: create index "commissionentry_company_id" to table: "commission_entries"
DROP INDEX "commissionentry_company_id";
-- reverse: create "commission_entries" table
DROP TABLE "commission_entries";
