-- Hand-written: least privilege for the work tables (issue 7 §4 meets issue 11). Comments are
-- created and go with their task (deleted with it); the API edits none. Calendar tokens are
-- replaced (delete + insert), never updated.
-- +goose Up
REVOKE UPDATE ON task_comments, calendar_tokens FROM brokerdesk_app;

-- +goose Down
GRANT UPDATE ON task_comments, calendar_tokens TO brokerdesk_app;
