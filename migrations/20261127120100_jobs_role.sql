-- Hand-written: the job queue has a role of its own, brokerdesk_jobs (issue 20 item 1). Request
-- work, as brokerdesk_app, could list company ids from river.river_job (job arguments carry
-- them; river's tables have no row-level security) and from webhook_pending_companies(). Every
-- job is inserted, fetched and worked on the job queue's pool (app/jobs; the webhook dispatcher,
-- the delivery retry, the portfolio transfer's create and commit all open their transaction
-- there, never on the request pool), which now logs in as brokerdesk_jobs: a member of
-- brokerdesk_app that inherits its grants and policies and adds river's tables (granted by
-- migrations/river.go after river's own migrations) and the function below. EnsureRoles creates
-- the role (cluster-wide) before this file runs. docs/decisions/tenancy-and-isolation.md "The job queue has its own login role".

-- +goose Up
REVOKE EXECUTE ON FUNCTION webhook_pending_companies() FROM brokerdesk_app;
GRANT EXECUTE ON FUNCTION webhook_pending_companies() TO brokerdesk_jobs;

-- +goose Down
REVOKE EXECUTE ON FUNCTION webhook_pending_companies() FROM brokerdesk_jobs;
GRANT EXECUTE ON FUNCTION webhook_pending_companies() TO brokerdesk_app;
