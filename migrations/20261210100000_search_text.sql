-- +goose Up
-- modify "documents" table
ALTER TABLE "documents" ADD COLUMN "text" text NOT NULL DEFAULT '';

-- +goose Down
-- reverse: modify "documents" table
ALTER TABLE "documents" DROP COLUMN "text";
