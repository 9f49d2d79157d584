-- Hand-written (issue 23): a document is released to the customer portal (released_at) on
-- upload, by PATCH /documents/{documentId} {releasedToCustomer} and when the contact signed it
-- (docs/decisions/portal.md). Everything else of a document stays immutable: the app role may
-- update the release and the version and time it bumps, no other column.

-- +goose Up
GRANT UPDATE (released_at, updated_at, version) ON documents TO brokerdesk_app;

-- +goose Down
REVOKE UPDATE (released_at, updated_at, version) ON documents FROM brokerdesk_app;
