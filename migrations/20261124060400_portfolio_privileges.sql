-- Hand-written: least privilege for portfolio transfers (issue 7 §4 meets issue 12). The API
-- lists, creates and commits transfers and deletes none (they go with their company).
-- +goose Up
REVOKE DELETE ON portfolio_transfers FROM brokerdesk_app;

-- +goose Down
GRANT DELETE ON portfolio_transfers TO brokerdesk_app;
