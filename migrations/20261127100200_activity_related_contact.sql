-- +goose Up
-- modify "contact_activities" table
ALTER TABLE "contact_activities" ADD COLUMN "related_contact_id" uuid NULL;

-- +goose Down
-- reverse: modify "contact_activities" table
ALTER TABLE "contact_activities" DROP COLUMN "related_contact_id";
