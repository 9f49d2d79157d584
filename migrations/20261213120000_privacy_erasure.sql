-- Hand-written (issue 25): what the privacy jobs (app/privacy, role brokerdesk_jobs) need beyond
-- the app role's grants, and nothing the app role gets.
--   - An erasure replaces the payload of the events that carry the erased contact's data
--     (the 30-day feed keeps the envelope: id, type, time, actor, seq) and deletes the e-mails
--     linked to the contact and threads left empty. The app role keeps no UPDATE on events and no
--     DELETE on e-mails (the API never does either).
--   - privacy_sweep_due(): the companies with retained records whose period ended or export ZIPs
--     whose link expired, for the periodic sweep. Every company table is under row-level
--     security, so, like mailbox_sync_due, a SECURITY DEFINER function owned by
--     brokerdesk_operator (whose operator_access policy admits every company) answers that one
--     question: company ids, nothing else. The sweep then pins a transaction to each company.
--     Only brokerdesk_jobs may call it.

-- +goose Up
GRANT UPDATE (data) ON events TO brokerdesk_jobs;
GRANT DELETE ON emails, email_threads TO brokerdesk_jobs;
-- +goose StatementBegin
CREATE FUNCTION public.privacy_sweep_due() RETURNS TABLE (company_id uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT r.company_id FROM public.retained_records r WHERE r.retain_until < current_date
  UNION
  SELECT p.company_id FROM public.privacy_requests p
  WHERE p.blob_key IS NOT NULL AND p.expires_at < now()
  ORDER BY 1;
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_operator;
ALTER FUNCTION public.privacy_sweep_due() OWNER TO brokerdesk_operator;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_operator;
REVOKE ALL ON FUNCTION public.privacy_sweep_due() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.privacy_sweep_due() TO brokerdesk_jobs;

-- +goose Down
DROP FUNCTION public.privacy_sweep_due();
REVOKE DELETE ON emails, email_threads FROM brokerdesk_jobs;
REVOKE UPDATE (data) ON events FROM brokerdesk_jobs;
