-- +goose Up
-- modify "webhook_endpoints" table
ALTER TABLE "webhook_endpoints" ADD COLUMN "credential_user_id" uuid NULL;

-- +goose Down
-- reverse: modify "webhook_endpoints" table
ALTER TABLE "webhook_endpoints" DROP COLUMN "credential_user_id";
