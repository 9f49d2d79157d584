-- +goose Up
-- modify "insurers" table
ALTER TABLE "insurers" ADD COLUMN "correspondence_email" character varying NOT NULL DEFAULT '';
-- modify "companies" table
ALTER TABLE "companies" ADD COLUMN "email_tracking" boolean NOT NULL DEFAULT true;
-- create "company_points" table
CREATE TABLE "company_points" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "balance" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "company_points_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "company_points_one_per_company" to table: "company_points"
CREATE UNIQUE INDEX "company_points_one_per_company" ON "company_points" ("company_id");
-- create index "companypoints_company_id" to table: "company_points"
CREATE INDEX "companypoints_company_id" ON "company_points" ("company_id");
-- create "correspondence_cases" table
CREATE TABLE "correspondence_cases" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "contact_id" uuid NOT NULL, "insurer_id" uuid NOT NULL, "contract_ids" jsonb NOT NULL, "transaction_type" character varying NOT NULL, "subject" text NOT NULL DEFAULT '', "body" text NOT NULL DEFAULT '', "recipient_email" character varying NOT NULL DEFAULT '', "form_data" jsonb NOT NULL, "status" character varying NOT NULL DEFAULT 'draft', "mailbox_id" uuid NULL, "email_id" uuid NULL, "thread_id" uuid NULL, "attachment_document_ids" jsonb NOT NULL, "sent_at" timestamptz NULL, "creator_id" uuid NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "correspondence_cases_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "correspondencecase_company_id" to table: "correspondence_cases"
CREATE INDEX "correspondencecase_company_id" ON "correspondence_cases" ("company_id");
-- create index "correspondencecase_company_id_contact_id" to table: "correspondence_cases"
CREATE INDEX "correspondencecase_company_id_contact_id" ON "correspondence_cases" ("company_id", "contact_id");
-- create index "correspondencecase_company_id_status" to table: "correspondence_cases"
CREATE INDEX "correspondencecase_company_id_status" ON "correspondence_cases" ("company_id", "status");
-- create index "correspondencecase_company_id_updated_at_id" to table: "correspondence_cases"
CREATE INDEX "correspondencecase_company_id_updated_at_id" ON "correspondence_cases" ("company_id", "updated_at", "id");
-- create "email_attachments" table
CREATE TABLE "email_attachments" ("id" uuid NOT NULL, "email_id" uuid NOT NULL, "thread_id" uuid NOT NULL, "filename" character varying NOT NULL DEFAULT '', "content_type" character varying NOT NULL DEFAULT 'application/octet-stream', "content_id" character varying NOT NULL DEFAULT '', "inline" boolean NOT NULL DEFAULT false, "size_bytes" bigint NOT NULL DEFAULT 0, "sha256" character varying NOT NULL DEFAULT '', "blob_key" character varying NOT NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "email_attachments_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "emailattachment_company_id" to table: "email_attachments"
CREATE INDEX "emailattachment_company_id" ON "email_attachments" ("company_id");
-- create index "emailattachment_company_id_email_id" to table: "email_attachments"
CREATE INDEX "emailattachment_company_id_email_id" ON "email_attachments" ("company_id", "email_id");
-- create "email_links" table
CREATE TABLE "email_links" ("id" uuid NOT NULL, "email_id" uuid NOT NULL, "thread_id" uuid NOT NULL, "contact_id" uuid NULL, "lead_id" uuid NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "email_links_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "emaillink_company_id" to table: "email_links"
CREATE INDEX "emaillink_company_id" ON "email_links" ("company_id");
-- create index "emaillink_company_id_contact_id_thread_id" to table: "email_links"
CREATE INDEX "emaillink_company_id_contact_id_thread_id" ON "email_links" ("company_id", "contact_id", "thread_id");
-- create index "emaillink_company_id_email_id_contact_id" to table: "email_links"
CREATE UNIQUE INDEX "emaillink_company_id_email_id_contact_id" ON "email_links" ("company_id", "email_id", "contact_id");
-- create index "emaillink_company_id_email_id_lead_id" to table: "email_links"
CREATE UNIQUE INDEX "emaillink_company_id_email_id_lead_id" ON "email_links" ("company_id", "email_id", "lead_id");
-- create index "emaillink_company_id_lead_id_thread_id" to table: "email_links"
CREATE INDEX "emaillink_company_id_lead_id_thread_id" ON "email_links" ("company_id", "lead_id", "thread_id");
-- create index "emaillink_company_id_thread_id" to table: "email_links"
CREATE INDEX "emaillink_company_id_thread_id" ON "email_links" ("company_id", "thread_id");
-- create "email_opt_outs" table
CREATE TABLE "email_opt_outs" ("id" uuid NOT NULL, "email" character varying NOT NULL, "reason" character varying NOT NULL DEFAULT '', "source" character varying NOT NULL DEFAULT 'api', "creator_id" uuid NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "email_opt_outs_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "emailoptout_company_id" to table: "email_opt_outs"
CREATE INDEX "emailoptout_company_id" ON "email_opt_outs" ("company_id");
-- create index "emailoptout_company_id_created_at_id" to table: "email_opt_outs"
CREATE INDEX "emailoptout_company_id_created_at_id" ON "email_opt_outs" ("company_id", "created_at", "id");
-- create index "emailoptout_company_id_email" to table: "email_opt_outs"
CREATE UNIQUE INDEX "emailoptout_company_id_email" ON "email_opt_outs" ("company_id", "email");
-- create "email_templates" table
CREATE TABLE "email_templates" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "name" character varying NOT NULL, "subject" text NOT NULL DEFAULT '', "body_text" text NOT NULL DEFAULT '', "body_html" text NULL, "category" character varying NULL, "marketing" boolean NOT NULL DEFAULT false, "placeholders" jsonb NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "email_templates_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "emailtemplate_company_id" to table: "email_templates"
CREATE INDEX "emailtemplate_company_id" ON "email_templates" ("company_id");
-- create index "emailtemplate_company_id_name" to table: "email_templates"
CREATE UNIQUE INDEX "emailtemplate_company_id_name" ON "email_templates" ("company_id", "name");
-- create "email_threads" table
CREATE TABLE "email_threads" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "mailbox_id" uuid NOT NULL, "subject" text NOT NULL DEFAULT '', "subject_key" text NOT NULL DEFAULT '', "last_message_at" timestamptz NOT NULL, "message_count" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "email_threads_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "emailthread_company_id" to table: "email_threads"
CREATE INDEX "emailthread_company_id" ON "email_threads" ("company_id");
-- create index "emailthread_company_id_last_message_at_id" to table: "email_threads"
CREATE INDEX "emailthread_company_id_last_message_at_id" ON "email_threads" ("company_id", "last_message_at", "id");
-- create index "emailthread_company_id_mailbox_id_subject_key" to table: "email_threads"
CREATE INDEX "emailthread_company_id_mailbox_id_subject_key" ON "email_threads" ("company_id", "mailbox_id", "subject_key");
-- create index "emailthread_company_id_updated_at" to table: "email_threads"
CREATE INDEX "emailthread_company_id_updated_at" ON "email_threads" ("company_id", "updated_at");
-- create "emails" table
CREATE TABLE "emails" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "version" bigint NOT NULL DEFAULT 1, "thread_id" uuid NOT NULL, "mailbox_id" uuid NOT NULL, "direction" character varying NOT NULL, "status" character varying NOT NULL, "message_id" character varying NOT NULL, "in_reply_to" character varying NOT NULL DEFAULT '', "references" jsonb NOT NULL, "from_address" character varying NOT NULL DEFAULT '', "from_name" character varying NOT NULL DEFAULT '', "to" jsonb NOT NULL, "cc" jsonb NOT NULL, "bcc" jsonb NOT NULL, "reply_to" character varying NOT NULL DEFAULT '', "subject" text NOT NULL DEFAULT '', "text_body" text NOT NULL DEFAULT '', "html_body" text NULL, "search_text" text NOT NULL DEFAULT '', "sent_at" timestamptz NULL, "delivered_at" timestamptz NULL, "opened_at" timestamptz NULL, "clicked_at" timestamptz NULL, "raw_key" character varying NOT NULL DEFAULT '', "size_bytes" bigint NOT NULL DEFAULT 0, "error" text NOT NULL DEFAULT '', "marketing" boolean NOT NULL DEFAULT false, "tracking" boolean NOT NULL DEFAULT false, "template_id" uuid NULL, "creator_id" uuid NULL, "points" bigint NOT NULL DEFAULT 0, "folder" character varying NOT NULL DEFAULT '', "imap_uid" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "emails_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "email_company_id" to table: "emails"
CREATE INDEX "email_company_id" ON "emails" ("company_id");
-- create index "email_company_id_mailbox_id_message_id" to table: "emails"
CREATE UNIQUE INDEX "email_company_id_mailbox_id_message_id" ON "emails" ("company_id", "mailbox_id", "message_id");
-- create index "email_company_id_status_created_at" to table: "emails"
CREATE INDEX "email_company_id_status_created_at" ON "emails" ("company_id", "status", "created_at");
-- create index "email_company_id_thread_id_sent_at_id" to table: "emails"
CREATE INDEX "email_company_id_thread_id_sent_at_id" ON "emails" ("company_id", "thread_id", "sent_at", "id");
-- create "mailbox_folders" table
CREATE TABLE "mailbox_folders" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "mailbox_id" uuid NOT NULL, "name" character varying NOT NULL, "uid_validity" bigint NOT NULL DEFAULT 0, "last_uid" bigint NOT NULL DEFAULT 0, "highest_modseq" bigint NOT NULL DEFAULT 0, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "mailbox_folders_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "mailboxfolder_company_id" to table: "mailbox_folders"
CREATE INDEX "mailboxfolder_company_id" ON "mailbox_folders" ("company_id");
-- create index "mailboxfolder_company_id_mailbox_id_name" to table: "mailbox_folders"
CREATE UNIQUE INDEX "mailboxfolder_company_id_mailbox_id_name" ON "mailbox_folders" ("company_id", "mailbox_id", "name");
-- create "mailboxes" table
CREATE TABLE "mailboxes" ("id" uuid NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "email" character varying NOT NULL, "label" character varying NOT NULL DEFAULT '', "shared" boolean NOT NULL DEFAULT false, "owner_id" uuid NULL, "imap_url" character varying NOT NULL, "smtp_url" character varying NOT NULL, "username" character varying NOT NULL, "password_sealed" bytea NOT NULL, "sent_folder" character varying NOT NULL DEFAULT '', "sync_state" character varying NOT NULL DEFAULT 'active', "sync_error" text NOT NULL DEFAULT '', "synced_at" timestamptz NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "mailboxes_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "mailbox_company_id" to table: "mailboxes"
CREATE INDEX "mailbox_company_id" ON "mailboxes" ("company_id");
-- create index "mailbox_company_id_email" to table: "mailboxes"
CREATE UNIQUE INDEX "mailbox_company_id_email" ON "mailboxes" ("company_id", "email");
-- create "point_entries" table
CREATE TABLE "point_entries" ("id" uuid NOT NULL, "delta" bigint NOT NULL, "reason" character varying NOT NULL, "email_id" uuid NULL, "created_at" timestamptz NOT NULL, "company_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "point_entries_companies_company" FOREIGN KEY ("company_id") REFERENCES "companies" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION);
-- create index "pointentry_company_id" to table: "point_entries"
CREATE INDEX "pointentry_company_id" ON "point_entries" ("company_id");
-- create index "pointentry_company_id_created_at" to table: "point_entries"
CREATE INDEX "pointentry_company_id_created_at" ON "point_entries" ("company_id", "created_at");

-- +goose Down
-- reverse: create index "pointentry_company_id_created_at" to table: "point_entries"
DROP INDEX "pointentry_company_id_created_at";
-- reverse: create index "pointentry_company_id" to table: "point_entries"
DROP INDEX "pointentry_company_id";
-- reverse: create "point_entries" table
DROP TABLE "point_entries";
-- reverse: create index "mailbox_company_id_email" to table: "mailboxes"
DROP INDEX "mailbox_company_id_email";
-- reverse: create index "mailbox_company_id" to table: "mailboxes"
DROP INDEX "mailbox_company_id";
-- reverse: create "mailboxes" table
DROP TABLE "mailboxes";
-- reverse: create index "mailboxfolder_company_id_mailbox_id_name" to table: "mailbox_folders"
DROP INDEX "mailboxfolder_company_id_mailbox_id_name";
-- reverse: create index "mailboxfolder_company_id" to table: "mailbox_folders"
DROP INDEX "mailboxfolder_company_id";
-- reverse: create "mailbox_folders" table
DROP TABLE "mailbox_folders";
-- reverse: create index "email_company_id_thread_id_sent_at_id" to table: "emails"
DROP INDEX "email_company_id_thread_id_sent_at_id";
-- reverse: create index "email_company_id_status_created_at" to table: "emails"
DROP INDEX "email_company_id_status_created_at";
-- reverse: create index "email_company_id_mailbox_id_message_id" to table: "emails"
DROP INDEX "email_company_id_mailbox_id_message_id";
-- reverse: create index "email_company_id" to table: "emails"
DROP INDEX "email_company_id";
-- reverse: create "emails" table
DROP TABLE "emails";
-- reverse: create index "emailthread_company_id_updated_at" to table: "email_threads"
DROP INDEX "emailthread_company_id_updated_at";
-- reverse: create index "emailthread_company_id_mailbox_id_subject_key" to table: "email_threads"
DROP INDEX "emailthread_company_id_mailbox_id_subject_key";
-- reverse: create index "emailthread_company_id_last_message_at_id" to table: "email_threads"
DROP INDEX "emailthread_company_id_last_message_at_id";
-- reverse: create index "emailthread_company_id" to table: "email_threads"
DROP INDEX "emailthread_company_id";
-- reverse: create "email_threads" table
DROP TABLE "email_threads";
-- reverse: create index "emailtemplate_company_id_name" to table: "email_templates"
DROP INDEX "emailtemplate_company_id_name";
-- reverse: create index "emailtemplate_company_id" to table: "email_templates"
DROP INDEX "emailtemplate_company_id";
-- reverse: create "email_templates" table
DROP TABLE "email_templates";
-- reverse: create index "emailoptout_company_id_email" to table: "email_opt_outs"
DROP INDEX "emailoptout_company_id_email";
-- reverse: create index "emailoptout_company_id_created_at_id" to table: "email_opt_outs"
DROP INDEX "emailoptout_company_id_created_at_id";
-- reverse: create index "emailoptout_company_id" to table: "email_opt_outs"
DROP INDEX "emailoptout_company_id";
-- reverse: create "email_opt_outs" table
DROP TABLE "email_opt_outs";
-- reverse: create index "emaillink_company_id_thread_id" to table: "email_links"
DROP INDEX "emaillink_company_id_thread_id";
-- reverse: create index "emaillink_company_id_lead_id_thread_id" to table: "email_links"
DROP INDEX "emaillink_company_id_lead_id_thread_id";
-- reverse: create index "emaillink_company_id_email_id_lead_id" to table: "email_links"
DROP INDEX "emaillink_company_id_email_id_lead_id";
-- reverse: create index "emaillink_company_id_email_id_contact_id" to table: "email_links"
DROP INDEX "emaillink_company_id_email_id_contact_id";
-- reverse: create index "emaillink_company_id_contact_id_thread_id" to table: "email_links"
DROP INDEX "emaillink_company_id_contact_id_thread_id";
-- reverse: create index "emaillink_company_id" to table: "email_links"
DROP INDEX "emaillink_company_id";
-- reverse: create "email_links" table
DROP TABLE "email_links";
-- reverse: create index "emailattachment_company_id_email_id" to table: "email_attachments"
DROP INDEX "emailattachment_company_id_email_id";
-- reverse: create index "emailattachment_company_id" to table: "email_attachments"
DROP INDEX "emailattachment_company_id";
-- reverse: create "email_attachments" table
DROP TABLE "email_attachments";
-- reverse: create index "correspondencecase_company_id_updated_at_id" to table: "correspondence_cases"
DROP INDEX "correspondencecase_company_id_updated_at_id";
-- reverse: create index "correspondencecase_company_id_status" to table: "correspondence_cases"
DROP INDEX "correspondencecase_company_id_status";
-- reverse: create index "correspondencecase_company_id_contact_id" to table: "correspondence_cases"
DROP INDEX "correspondencecase_company_id_contact_id";
-- reverse: create index "correspondencecase_company_id" to table: "correspondence_cases"
DROP INDEX "correspondencecase_company_id";
-- reverse: create "correspondence_cases" table
DROP TABLE "correspondence_cases";
-- reverse: create index "companypoints_company_id" to table: "company_points"
DROP INDEX "companypoints_company_id";
-- reverse: create index "company_points_one_per_company" to table: "company_points"
DROP INDEX "company_points_one_per_company";
-- reverse: create "company_points" table
DROP TABLE "company_points";
-- reverse: modify "companies" table
ALTER TABLE "companies" DROP COLUMN "email_tracking";
-- reverse: modify "insurers" table
ALTER TABLE "insurers" DROP COLUMN "correspondence_email";
