-- +goose Up
-- create "job_runs" table
CREATE TABLE "job_runs" ("id" character varying NOT NULL, "last_run_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- create "event_counters" table
CREATE TABLE "event_counters" ("id" uuid NOT NULL, "last_seq" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "event_counters_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "eventcounter_company_id" to table: "event_counters"
CREATE INDEX "eventcounter_company_id" ON "event_counters" ("company_id");
-- create index "eventcounter_company_unique" to table: "event_counters"
CREATE UNIQUE INDEX "eventcounter_company_unique" ON "event_counters" ("company_id");
-- create "events" table
CREATE TABLE "events" ("id" uuid NOT NULL, "type" character varying NOT NULL, "occurred_at" timestamptz NOT NULL, "data" jsonb NOT NULL, "actor" jsonb NOT NULL, "seq" bigint NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "events_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "event_company_id" to table: "events"
CREATE INDEX "event_company_id" ON "events" ("company_id");
-- create index "event_company_id_seq" to table: "events"
CREATE UNIQUE INDEX "event_company_id_seq" ON "events" ("company_id", "seq");
-- create index "event_occurred_at" to table: "events"
CREATE INDEX "event_occurred_at" ON "events" ("occurred_at");
-- create "idempotency_keys" table
CREATE TABLE "idempotency_keys" ("id" uuid NOT NULL, "credential_id" uuid NOT NULL, "key" character varying NOT NULL, "method" character varying NOT NULL, "route" character varying NOT NULL, "fingerprint" bytea NOT NULL, "status" character varying NOT NULL DEFAULT 'in_progress', "locked_until" timestamptz NOT NULL, "response_status" bigint NULL, "response_headers" jsonb NULL, "response_body" bytea NULL, "created_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "idempotency_keys_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "idempotencykey_company_id" to table: "idempotency_keys"
CREATE INDEX "idempotencykey_company_id" ON "idempotency_keys" ("company_id");
-- create index "idempotencykey_company_id_credential_id_method_route_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX "idempotencykey_company_id_credential_id_method_route_key" ON "idempotency_keys" ("company_id", "credential_id", "method", "route", "key");
-- create index "idempotencykey_expires_at" to table: "idempotency_keys"
CREATE INDEX "idempotencykey_expires_at" ON "idempotency_keys" ("expires_at");

-- +goose Down
-- reverse: create index "idempotencykey_expires_at" to table: "idempotency_keys"
DROP INDEX "idempotencykey_expires_at";
-- reverse: create index "idempotencykey_company_id_credential_id_method_route_key" to table: "idempotency_keys"
DROP INDEX "idempotencykey_company_id_credential_id_method_route_key";
-- reverse: create index "idempotencykey_company_id" to table: "idempotency_keys"
DROP INDEX "idempotencykey_company_id";
-- reverse: create "idempotency_keys" table
DROP TABLE "idempotency_keys";
-- reverse: create index "event_occurred_at" to table: "events"
DROP INDEX "event_occurred_at";
-- reverse: create index "event_company_id_seq" to table: "events"
DROP INDEX "event_company_id_seq";
-- reverse: create index "event_company_id" to table: "events"
DROP INDEX "event_company_id";
-- reverse: create "events" table
DROP TABLE "events";
-- reverse: create index "eventcounter_company_unique" to table: "event_counters"
DROP INDEX "eventcounter_company_unique";
-- reverse: create index "eventcounter_company_id" to table: "event_counters"
DROP INDEX "eventcounter_company_id";
-- reverse: create "event_counters" table
DROP TABLE "event_counters";
-- reverse: create "job_runs" table
DROP TABLE "job_runs";
