-- Hand-written: row-level security and tenant keys of portfolio transfers.

-- +goose Up
SELECT app_enable_tenant_rls('portfolio_transfers');
ALTER TABLE portfolio_transfers ADD CONSTRAINT tenant_portfolio_transfers_owner
  FOREIGN KEY (company_id, owner_id) REFERENCES users (company_id, id) ON DELETE SET NULL (owner_id);

-- +goose Down
ALTER TABLE portfolio_transfers DROP CONSTRAINT tenant_portfolio_transfers_owner;
