-- Hand-written: RLS for the outbox and idempotency tables, commit-ordered event sequence numbers,
-- and the cluster-wide purge job.

-- +goose Up
SELECT app_enable_tenant_rls('events');
SELECT app_enable_tenant_rls('event_counters');
SELECT app_enable_tenant_rls('idempotency_keys');
-- Events are never changed or deleted by request work (the purge runs as the operator role).
REVOKE UPDATE, DELETE ON events FROM brokerdesk_app;
GRANT UPDATE (seq) ON events TO brokerdesk_app;

-- Each event gets its company's next sequence number when its transaction commits. The counter
-- row's lock is held from here to the end of the commit, so a company's event-writing commits
-- happen one after another in seq order: a reader that sees seq N sees every seq below N, and
-- paging /events by seq never skips an event that committed late.
-- +goose StatementBegin
CREATE FUNCTION events_assign_seq() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
  s bigint;
BEGIN
  INSERT INTO event_counters (id, company_id, last_seq) VALUES (gen_random_uuid(), NEW.company_id, 0)
    ON CONFLICT (company_id) DO NOTHING;
  UPDATE event_counters SET last_seq = last_seq + 1 WHERE company_id = NEW.company_id RETURNING last_seq INTO s;
  UPDATE events SET seq = s WHERE id = NEW.id;
  RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER events_assign_seq AFTER INSERT ON events
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION events_assign_seq();

-- Purge: events older than 30 days and expired idempotency records, for every company. job_runs
-- makes one replica per interval do it: the first UPDATE wins, the others find the row fresh.
REVOKE ALL ON job_runs FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE ON job_runs TO brokerdesk_operator;
GRANT USAGE, CREATE ON SCHEMA public TO brokerdesk_operator;
-- +goose StatementBegin
CREATE FUNCTION maintenance_purge(p_every interval, p_events_age interval)
RETURNS TABLE (ran boolean, events bigint, idempotency_keys bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public
AS $$
DECLARE
  n_events bigint := 0;
  n_keys bigint := 0;
BEGIN
  INSERT INTO job_runs (id, last_run_at) VALUES ('purge', '-infinity') ON CONFLICT (id) DO NOTHING;
  UPDATE job_runs SET last_run_at = now() WHERE id = 'purge' AND last_run_at <= now() - p_every;
  IF NOT FOUND THEN
    RETURN QUERY SELECT false, 0::bigint, 0::bigint;
    RETURN;
  END IF;
  DELETE FROM events WHERE occurred_at < now() - p_events_age;
  GET DIAGNOSTICS n_events = ROW_COUNT;
  DELETE FROM idempotency_keys WHERE expires_at < now();
  GET DIAGNOSTICS n_keys = ROW_COUNT;
  RETURN QUERY SELECT true, n_events, n_keys;
END $$;
-- +goose StatementEnd
ALTER FUNCTION maintenance_purge(interval, interval) OWNER TO brokerdesk_operator;
REVOKE ALL ON FUNCTION maintenance_purge(interval, interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION maintenance_purge(interval, interval) TO brokerdesk_app;

-- +goose Down
DROP FUNCTION maintenance_purge(interval, interval);
DROP TRIGGER events_assign_seq ON events;
DROP FUNCTION events_assign_seq();
