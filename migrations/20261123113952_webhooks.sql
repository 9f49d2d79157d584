-- +goose Up
-- create "webhook_cursors" table
CREATE TABLE "webhook_cursors" ("id" uuid NOT NULL, "dispatched_seq" bigint NOT NULL DEFAULT 0, "updated_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_cursors_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "webhookcursor_company_id" to table: "webhook_cursors"
CREATE INDEX "webhookcursor_company_id" ON "webhook_cursors" ("company_id");
-- create index "webhookcursor_company_unique" to table: "webhook_cursors"
CREATE UNIQUE INDEX "webhookcursor_company_unique" ON "webhook_cursors" ("company_id");
-- create "webhook_deliveries" table
CREATE TABLE "webhook_deliveries" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "endpoint_id" uuid NOT NULL, "event_id" uuid NOT NULL, "event_type" character varying NOT NULL, "attempt" bigint NOT NULL, "status" character varying NOT NULL, "http_status" bigint NULL, "response_body" character varying NULL, "duration_ms" bigint NULL, "error" character varying NULL, "attempted_at" timestamptz NULL, "next_attempt_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_deliveries_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "webhookdelivery_company_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_company_id" ON "webhook_deliveries" ("company_id");
-- create index "webhookdelivery_company_id_endpoint_id_created_at_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_company_id_endpoint_id_created_at_id" ON "webhook_deliveries" ("company_id", "endpoint_id", "created_at", "id");
-- create index "webhookdelivery_created_at" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_created_at" ON "webhook_deliveries" ("created_at");
-- create index "webhookdelivery_endpoint_id_event_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_endpoint_id_event_id" ON "webhook_deliveries" ("endpoint_id", "event_id");
-- create "webhook_endpoints" table
CREATE TABLE "webhook_endpoints" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "url" character varying NOT NULL, "description" character varying NULL, "event_types" jsonb NOT NULL, "enabled" boolean NOT NULL DEFAULT true, "disabled_reason" character varying NULL, "secret" bytea NOT NULL, "previous_secret" bytea NULL, "previous_secret_expires_at" timestamptz NULL, "credential_id" uuid NULL, "start_seq" bigint NOT NULL DEFAULT 0, "failing_since" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "webhook_endpoints_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "webhookendpoint_company_id" to table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_company_id" ON "webhook_endpoints" ("company_id");
-- create index "webhookendpoint_company_id_created_at_id" to table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_company_id_created_at_id" ON "webhook_endpoints" ("company_id", "created_at", "id");

-- +goose Down
-- reverse: create index "webhookendpoint_company_id_created_at_id" to table: "webhook_endpoints"
DROP INDEX "webhookendpoint_company_id_created_at_id";
-- reverse: create index "webhookendpoint_company_id" to table: "webhook_endpoints"
DROP INDEX "webhookendpoint_company_id";
-- reverse: create "webhook_endpoints" table
DROP TABLE "webhook_endpoints";
-- reverse: create index "webhookdelivery_endpoint_id_event_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_endpoint_id_event_id";
-- reverse: create index "webhookdelivery_created_at" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_created_at";
-- reverse: create index "webhookdelivery_company_id_endpoint_id_created_at_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_company_id_endpoint_id_created_at_id";
-- reverse: create index "webhookdelivery_company_id" to table: "webhook_deliveries"
DROP INDEX "webhookdelivery_company_id";
-- reverse: create "webhook_deliveries" table
DROP TABLE "webhook_deliveries";
-- reverse: create index "webhookcursor_company_unique" to table: "webhook_cursors"
DROP INDEX "webhookcursor_company_unique";
-- reverse: create index "webhookcursor_company_id" to table: "webhook_cursors"
DROP INDEX "webhookcursor_company_id";
-- reverse: create "webhook_cursors" table
DROP TABLE "webhook_cursors";
