package webhooks

// The statements of this package that ent does not write, each with the reason. Most run in a
// pgx transaction of the job pool (tenancy.BeginPgx), because river inserts its jobs through
// pgx in the same transaction, and ent has no client there.

// The dispatcher's batch (Dispatcher.batch), one pgx transaction with the delivery jobs it
// queues.
const (
	// lockCursor takes the company's dispatch cursor; NOWAIT: another dispatcher holding it is
	// doing this company's work already (errBusy), no reason to queue behind it.
	lockCursor = `SELECT dispatched_seq FROM webhook_cursors WHERE company_id = $1 FOR UPDATE NOWAIT`
	// enabledEndpoints are the subscriptions the batch fans events out to.
	enabledEndpoints = `SELECT id, event_types, start_seq FROM webhook_endpoints WHERE company_id = $1 AND enabled`
	// skipCursor moves the cursor past every committed event when nothing listens.
	skipCursor = `UPDATE webhook_cursors SET dispatched_seq = GREATEST(dispatched_seq,
	(SELECT coalesce(max(last_seq), 0) FROM event_counters WHERE company_id = $1)), updated_at = now()
	WHERE company_id = $1`
	// eventsAfter reads the next events in sequence order.
	eventsAfter = `SELECT id, type, seq FROM events WHERE company_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`
	// advanceCursor records how far the batch dispatched.
	advanceCursor = `UPDATE webhook_cursors SET dispatched_seq = $2, updated_at = now() WHERE company_id = $1`
)

// Functions of migrations/ that work across companies or past what the caller sees (SECURITY
// DEFINER): ent cannot call a function.
const (
	// pendingCompaniesQuery names the companies with events not yet dispatched.
	pendingCompaniesQuery = `SELECT webhook_pending_companies()`
	// purgeQuery removes the delivery log older than LogRetention, in every company.
	purgeQuery = `SELECT webhook_purge()`
	// endpointCountQuery counts every endpoint of the pinned company, also those the caller may
	// not see (its own are all a non-admin credential reads): webhook_endpoint_count.
	endpointCountQuery = `SELECT webhook_endpoint_count()`
)

// queueRetry inserts the pending log row of a retry with the next attempt number, in the pgx
// transaction that queues its job (Service.Retry): neither exists without the other. Raw SQL
// because the attempt number is computed in the same statement (max + 1 of the event's log),
// so two retries never share one.
const queueRetry = `INSERT INTO webhook_deliveries (id, company_id, created_at, updated_at, endpoint_id, event_id,
	event_type, attempt, status)
SELECT $1, $2, $3, $3, $4, $5, $6, coalesce(max(attempt), 0) + 1, 'pending'
FROM webhook_deliveries WHERE company_id = $2 AND endpoint_id = $4 AND event_id = $5
RETURNING attempt`

// listenEvents subscribes the dispatcher's dedicated connection to the trigger's
// notifications (ent has no LISTEN).
const listenEvents = "LISTEN " + Channel
