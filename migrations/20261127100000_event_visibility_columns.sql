-- +goose Up
-- modify "events" table
ALTER TABLE "events" ADD COLUMN "co_owner_id" uuid NULL, ADD COLUMN "related_contact_id" uuid NULL, ADD COLUMN "related_owner_id" uuid NULL;

-- +goose Down
-- reverse: modify "events" table
ALTER TABLE "events" DROP COLUMN "related_owner_id", DROP COLUMN "related_contact_id", DROP COLUMN "co_owner_id";
