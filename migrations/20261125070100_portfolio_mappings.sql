-- CSV mappings of portfolio transfers (issue 12): generated part, then by hand the tenancy of
-- portfolio_mappings and the key from a transfer to its mapping. A transfer keeps a snapshot
-- of its mapping (mapping), so deleting the mapping only clears mapping_id.

-- +goose Up
-- modify "portfolio_transfers" table
ALTER TABLE "portfolio_transfers" ADD COLUMN "mapping" jsonb NULL;
-- create "portfolio_mappings" table
CREATE TABLE "portfolio_mappings" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "name" character varying NOT NULL, "columns" jsonb NOT NULL, "defaults" jsonb NULL, "decimal_point" boolean NOT NULL DEFAULT false, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "portfolio_mappings_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "portfoliomapping_company_id" to table: "portfolio_mappings"
CREATE INDEX "portfoliomapping_company_id" ON "portfolio_mappings" ("company_id");
-- create index "portfoliomapping_company_id_created_at_id" to table: "portfolio_mappings"
CREATE INDEX "portfoliomapping_company_id_created_at_id" ON "portfolio_mappings" ("company_id", "created_at", "id");

SELECT app_enable_tenant_rls('portfolio_mappings');
CREATE UNIQUE INDEX tenant_portfolio_mappings_company_id_id ON portfolio_mappings (company_id, id);
-- Before this, a GDV or BiPRO transfer could carry a mappingId nothing checked: cleared.
SET LOCAL ROLE brokerdesk_operator;
UPDATE portfolio_transfers SET mapping_id = NULL WHERE mapping_id IS NOT NULL;
RESET ROLE;
ALTER TABLE portfolio_transfers ADD CONSTRAINT tenant_portfolio_transfers_mapping
  FOREIGN KEY (company_id, mapping_id) REFERENCES portfolio_mappings (company_id, id) ON DELETE SET NULL (mapping_id);

-- +goose Down
ALTER TABLE portfolio_transfers DROP CONSTRAINT tenant_portfolio_transfers_mapping;
DROP INDEX tenant_portfolio_mappings_company_id_id;
-- reverse: create index "portfoliomapping_company_id_created_at_id" to table: "portfolio_mappings"
DROP INDEX "portfoliomapping_company_id_created_at_id";
-- reverse: create index "portfoliomapping_company_id" to table: "portfolio_mappings"
DROP INDEX "portfoliomapping_company_id";
-- reverse: create "portfolio_mappings" table
DROP TABLE "portfolio_mappings";
-- reverse: modify "portfolio_transfers" table
ALTER TABLE "portfolio_transfers" DROP COLUMN "mapping";
