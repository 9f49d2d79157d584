-- +goose Up
-- create "appointment_exceptions" table
CREATE TABLE "appointment_exceptions" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "appointment_id" uuid NOT NULL, "occurrence_start" timestamptz NOT NULL, "cancelled" boolean NOT NULL DEFAULT false, "title" character varying NULL, "description" text NULL, "location" character varying NULL, "type" character varying NULL, "start_at" timestamptz NULL, "end_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "appointment_exceptions_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "appointmentexception_company_id" to table: "appointment_exceptions"
CREATE INDEX "appointmentexception_company_id" ON "appointment_exceptions" ("company_id");
-- create index "appointmentexception_company_id_appointment_id_occurrence_start" to table: "appointment_exceptions"
CREATE UNIQUE INDEX "appointmentexception_company_id_appointment_id_occurrence_start" ON "appointment_exceptions" ("company_id", "appointment_id", "occurrence_start");
-- create "appointments" table
CREATE TABLE "appointments" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "title" character varying NOT NULL, "description" text NOT NULL DEFAULT '', "location" character varying NOT NULL DEFAULT '', "type" character varying NOT NULL DEFAULT 'meeting', "start_at" timestamptz NOT NULL, "end_at" timestamptz NOT NULL, "all_day" boolean NOT NULL DEFAULT false, "time_zone" character varying NOT NULL DEFAULT 'Europe/Berlin', "recurrence" character varying NULL, "series_end" timestamptz NULL, "owner_id" uuid NULL, "contact_id" uuid NULL, "creator_id" uuid NULL, "split_from" uuid NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "appointments_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "appointment_company_id" to table: "appointments"
CREATE INDEX "appointment_company_id" ON "appointments" ("company_id");
-- create index "appointment_company_id_contact_id" to table: "appointments"
CREATE INDEX "appointment_company_id_contact_id" ON "appointments" ("company_id", "contact_id");
-- create index "appointment_company_id_owner_id" to table: "appointments"
CREATE INDEX "appointment_company_id_owner_id" ON "appointments" ("company_id", "owner_id");
-- create index "appointment_company_id_start_at_series_end" to table: "appointments"
CREATE INDEX "appointment_company_id_start_at_series_end" ON "appointments" ("company_id", "start_at", "series_end");
-- create "calendar_tokens" table
CREATE TABLE "calendar_tokens" ("id" uuid NOT NULL, "user_id" uuid NOT NULL, "token_hash" bytea NOT NULL, "prefix" character varying NOT NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "calendar_tokens_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "calendartoken_company_id" to table: "calendar_tokens"
CREATE INDEX "calendartoken_company_id" ON "calendar_tokens" ("company_id");
-- create index "calendartoken_company_id_user_id" to table: "calendar_tokens"
CREATE UNIQUE INDEX "calendartoken_company_id_user_id" ON "calendar_tokens" ("company_id", "user_id");
-- create index "calendartoken_token_hash" to table: "calendar_tokens"
CREATE UNIQUE INDEX "calendartoken_token_hash" ON "calendar_tokens" ("token_hash");
-- create "task_comments" table
CREATE TABLE "task_comments" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "task_id" uuid NOT NULL, "parent_id" uuid NULL, "author_id" uuid NULL, "content" text NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "task_comments_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "taskcomment_company_id" to table: "task_comments"
CREATE INDEX "taskcomment_company_id" ON "task_comments" ("company_id");
-- create index "taskcomment_company_id_task_id_created_at_id" to table: "task_comments"
CREATE INDEX "taskcomment_company_id_task_id_created_at_id" ON "task_comments" ("company_id", "task_id", "created_at", "id");
-- create "tasks" table
CREATE TABLE "tasks" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "external_references" jsonb NULL, "title" character varying NOT NULL, "description" text NOT NULL DEFAULT '', "contact_id" uuid NULL, "lead_id" uuid NULL, "assignee_id" uuid NULL, "creator_id" uuid NULL, "due_at" timestamptz NULL, "priority" character varying NOT NULL DEFAULT 'normal', "status" character varying NOT NULL DEFAULT 'open', "completed_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "tasks_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "task_company_id" to table: "tasks"
CREATE INDEX "task_company_id" ON "tasks" ("company_id");
-- create index "task_company_id_assignee_id" to table: "tasks"
CREATE INDEX "task_company_id_assignee_id" ON "tasks" ("company_id", "assignee_id");
-- create index "task_company_id_contact_id" to table: "tasks"
CREATE INDEX "task_company_id_contact_id" ON "tasks" ("company_id", "contact_id");
-- create index "task_company_id_lead_id" to table: "tasks"
CREATE INDEX "task_company_id_lead_id" ON "tasks" ("company_id", "lead_id");
-- create index "task_company_id_updated_at_id" to table: "tasks"
CREATE INDEX "task_company_id_updated_at_id" ON "tasks" ("company_id", "updated_at", "id");

-- +goose Down
-- reverse: create index "task_company_id_updated_at_id" to table: "tasks"
DROP INDEX "task_company_id_updated_at_id";
-- reverse: create index "task_company_id_lead_id" to table: "tasks"
DROP INDEX "task_company_id_lead_id";
-- reverse: create index "task_company_id_contact_id" to table: "tasks"
DROP INDEX "task_company_id_contact_id";
-- reverse: create index "task_company_id_assignee_id" to table: "tasks"
DROP INDEX "task_company_id_assignee_id";
-- reverse: create index "task_company_id" to table: "tasks"
DROP INDEX "task_company_id";
-- reverse: create "tasks" table
DROP TABLE "tasks";
-- reverse: create index "taskcomment_company_id_task_id_created_at_id" to table: "task_comments"
DROP INDEX "taskcomment_company_id_task_id_created_at_id";
-- reverse: create index "taskcomment_company_id" to table: "task_comments"
DROP INDEX "taskcomment_company_id";
-- reverse: create "task_comments" table
DROP TABLE "task_comments";
-- reverse: create index "calendartoken_token_hash" to table: "calendar_tokens"
DROP INDEX "calendartoken_token_hash";
-- reverse: create index "calendartoken_company_id_user_id" to table: "calendar_tokens"
DROP INDEX "calendartoken_company_id_user_id";
-- reverse: create index "calendartoken_company_id" to table: "calendar_tokens"
DROP INDEX "calendartoken_company_id";
-- reverse: create "calendar_tokens" table
DROP TABLE "calendar_tokens";
-- reverse: create index "appointment_company_id_start_at_series_end" to table: "appointments"
DROP INDEX "appointment_company_id_start_at_series_end";
-- reverse: create index "appointment_company_id_owner_id" to table: "appointments"
DROP INDEX "appointment_company_id_owner_id";
-- reverse: create index "appointment_company_id_contact_id" to table: "appointments"
DROP INDEX "appointment_company_id_contact_id";
-- reverse: create index "appointment_company_id" to table: "appointments"
DROP INDEX "appointment_company_id";
-- reverse: create "appointments" table
DROP TABLE "appointments";
-- reverse: create index "appointmentexception_company_id_appointment_id_occurrence_start" to table: "appointment_exceptions"
DROP INDEX "appointmentexception_company_id_appointment_id_occurrence_start";
-- reverse: create index "appointmentexception_company_id" to table: "appointment_exceptions"
DROP INDEX "appointmentexception_company_id";
-- reverse: create "appointment_exceptions" table
DROP TABLE "appointment_exceptions";
