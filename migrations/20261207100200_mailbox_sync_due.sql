-- Hand-written (issue 21): which mailboxes the periodic IMAP sync visits. Every company table
-- is under row-level security, so the job queue's role cannot list the companies that have
-- mailboxes; like webhook_pending_companies, a SECURITY DEFINER function owned by
-- brokerdesk_operator (whose operator_access policy admits every company) answers that one
-- question and nothing else: the ids of the mailboxes not paused of active companies, no
-- addresses or credentials. The sync then pins a transaction to each company as always.
-- Only brokerdesk_jobs may call it (request work could list company ids with it).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION public.mailbox_sync_due() RETURNS TABLE (company_id uuid, mailbox_id uuid)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  RETURN QUERY
  SELECT m.company_id, m.id FROM public.mailboxes m
  JOIN public.companies c ON c.id = m.company_id AND c.status = 'active'
  WHERE m.sync_state <> 'paused'
  ORDER BY m.company_id, m.id;
END $$;
-- +goose StatementEnd
GRANT CREATE ON SCHEMA public TO brokerdesk_operator;
ALTER FUNCTION public.mailbox_sync_due() OWNER TO brokerdesk_operator;
REVOKE CREATE ON SCHEMA public FROM brokerdesk_operator;
REVOKE ALL ON FUNCTION public.mailbox_sync_due() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION public.mailbox_sync_due() TO brokerdesk_jobs;

-- +goose Down
DROP FUNCTION public.mailbox_sync_due();
