-- Hand-written: least privilege for delegations (issue 7 §4 meets issue 8). The API creates and
-- deletes delegations and never updates one (a new validUntil is a delete and a create).
-- +goose Up
REVOKE UPDATE ON delegations FROM brokerdesk_app;

-- +goose Down
GRANT UPDATE ON delegations TO brokerdesk_app;
