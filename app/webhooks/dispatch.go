package webhooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Channel is the NOTIFY channel of the events_notify_webhooks trigger (migrations/).
const Channel = "brokerdesk_webhooks"

// SweepEvery is how often the leader looks for companies whose events were not dispatched (a
// notification lost while no process listened).
const SweepEvery = 30 * time.Second

// dispatchBatch is how many events one dispatch transaction turns into jobs.
const dispatchBatch = 500

// errBusy: another process holds the company's cursor right now.
var errBusy = errors.New("dispatch busy")

// Dispatcher turns a company's new events into delivery jobs.
type Dispatcher struct {
	pool *pgxpool.Pool
	log  zerolog.Logger
}

type endpointSub struct {
	id       uuid.UUID
	types    []string
	startSeq int64
}

// Dispatch turns every event of company after its cursor into one job per (event, endpoint
// subscribed to its type), in batches. Each batch is one transaction pinned to the company: it
// locks the cursor row (NOWAIT: when another process holds it, errBusy and the caller tries
// again shortly, so no process waits on another), reads the enabled endpoints and the events
// after the cursor in seq order, inserts the jobs and moves the cursor. Jobs and cursor commit
// together, so a crash anywhere inserts each pair exactly once. Events are not filtered by the
// credential here: that is decided at delivery.
func (d *Dispatcher) Dispatch(ctx context.Context, q *jobs.Client, company uuid.UUID) (int, error) {
	total := 0
	for {
		n, more, err := d.batch(ctx, q, company)
		total += n
		if err != nil || !more {
			return total, err
		}
	}
}

func (d *Dispatcher) batch(ctx context.Context, q *jobs.Client, company uuid.UUID) (int, bool, error) {
	tx, err := tenancy.BeginPgx(tenancy.WithCompany(ctx, company), d.pool)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
	var cursor int64
	err = tx.QueryRow(ctx, lockCursor, company).Scan(&cursor)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available
		return 0, false, errBusy
	case errors.Is(err, pgx.ErrNoRows):
		return 0, false, nil // no endpoint was ever created: nothing to dispatch
	case err != nil:
		return 0, false, fmt.Errorf("lock webhook cursor: %w", err)
	}
	rows, err := tx.Query(ctx, enabledEndpoints, company)
	if err != nil {
		return 0, false, err
	}
	var subs []endpointSub
	from := int64(-1)
	for rows.Next() {
		var s endpointSub
		if err := rows.Scan(&s.id, &s.types, &s.startSeq); err != nil {
			rows.Close()
			return 0, false, err
		}
		subs = append(subs, s)
		if from < 0 || s.startSeq < from {
			from = s.startSeq
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, err
	}
	if len(subs) == 0 { // nothing listens: skip what committed so far
		if _, err := tx.Exec(ctx, skipCursor, company); err != nil {
			return 0, false, err
		}
		return 0, false, tx.Commit(ctx)
	}
	from = max(from, cursor) // events before every endpoint's start need no look
	evs, err := tx.Query(ctx, eventsAfter,
		company, from, dispatchBatch)
	if err != nil {
		return 0, false, err
	}
	var params []river.InsertManyParams
	last, n := from, 0
	for evs.Next() {
		var id uuid.UUID
		var typ string
		var seq int64
		if err := evs.Scan(&id, &typ, &seq); err != nil {
			evs.Close()
			return 0, false, err
		}
		last, n = seq, n+1
		for _, s := range subs {
			if seq > s.startSeq && wants(s.types, typ) {
				params = append(params, river.InsertManyParams{Args: DeliveryArgs{
					CompanyID: company, EndpointID: s.id, EventID: id, EventType: typ}})
			}
		}
	}
	evs.Close()
	if err := evs.Err(); err != nil {
		return 0, false, err
	}
	if len(params) > 0 {
		if _, err := q.InsertManyFastTx(ctx, tx, params); err != nil {
			return 0, false, fmt.Errorf("insert delivery jobs: %w", err)
		}
	}
	if last != cursor {
		if _, err := tx.Exec(ctx, advanceCursor,
			company, last); err != nil {
			return 0, false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, false, err
	}
	return len(params), n == dispatchBatch, nil
}

// Relay is the LISTEN loop of one process: it marks companies named by notifications and runs
// the dispatcher for them, one company at a time. Every process gets every notification; the
// first to lock a company's cursor dispatches, the others find it busy and try again until they
// have run once after the notification (so a process that dies mid-dispatch loses nothing).
type Relay struct {
	m     *Module
	mu    sync.Mutex
	dirty map[uuid.UUID]struct{}
	wake  chan struct{}
}

// Run listens until ctx ends, reconnecting after errors. After every (re)connect it marks every
// company with undispatched events, since notifications sent meanwhile were lost.
func (r *Relay) Run(ctx context.Context) {
	r.dirty = map[uuid.UUID]struct{}{}
	r.wake = make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); r.drain(ctx) }()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := r.listen(ctx)
		if ctx.Err() != nil {
			break
		}
		r.m.d.Log.Warn().Err(err).Msg("webhook relay: listen failed; reconnecting")
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	wg.Wait()
}

func (r *Relay) listen(ctx context.Context) error {
	conn, err := r.m.d.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// The connection carries a LISTEN: close it instead of returning it to the pool.
		_ = conn.Conn().Close(context.Background())
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, listenEvents); err != nil {
		return err
	}
	if err := r.markPending(ctx, conn.Conn()); err != nil {
		return err
	}
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if id, err := uuid.Parse(n.Payload); err == nil {
			r.mark(id)
		}
	}
}

// markPending marks every company whose events are not all dispatched.
func (r *Relay) markPending(ctx context.Context, conn *pgx.Conn) error {
	ids, err := pendingCompanies(ctx, conn)
	for _, id := range ids {
		r.mark(id)
	}
	return err
}

func pendingCompanies(ctx context.Context, conn interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) ([]uuid.UUID, error) {
	rows, err := conn.Query(ctx, pendingCompaniesQuery)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

func (r *Relay) mark(id uuid.UUID) {
	r.mu.Lock()
	r.dirty[id] = struct{}{}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Relay) drain(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		batch := r.dirty
		r.dirty = map[uuid.UUID]struct{}{}
		r.mu.Unlock()
		retry := false
		for id := range batch {
			if ctx.Err() != nil {
				return
			}
			if _, err := r.m.disp.Dispatch(ctx, r.m.queue, id); err != nil {
				if !errors.Is(err, errBusy) && ctx.Err() == nil {
					r.m.d.Log.Error().Err(err).Str("company_id", id.String()).Msg("webhook dispatch failed")
				}
				r.mu.Lock()
				r.dirty[id] = struct{}{}
				r.mu.Unlock()
				retry = true
			}
		}
		if retry {
			go func() {
				select {
				case <-ctx.Done():
				case <-time.After(20 * time.Millisecond):
					select {
					case r.wake <- struct{}{}:
					default:
					}
				}
			}()
		}
	}
}

// SweepArgs is the periodic sweep: dispatch every company with undispatched events.
type SweepArgs struct{}

// Kind names the job.
func (SweepArgs) Kind() string { return "webhook_sweep" }

// InsertOpts keep one sweep queued at a time.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDefault, MaxAttempts: 1,
		UniqueOpts: river.UniqueOpts{ByPeriod: SweepEvery}}
}

// sweep is the sweep job: dispatch every pending company; a busy one is being dispatched right
// now.
func (m *Module) sweep(ctx context.Context) error {
	ids, err := pendingCompanies(ctx, m.d.Pool)
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if _, err := m.disp.Dispatch(ctx, m.queue, id); err != nil && !errors.Is(err, errBusy) {
			errs = append(errs, fmt.Errorf("company %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// PurgeArgs is the periodic purge of the delivery log (30 days).
type PurgeArgs struct{}

// Kind names the job.
func (PurgeArgs) Kind() string { return "webhook_purge" }

// InsertOpts keep one purge queued at a time.
func (PurgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDefault, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: time.Hour}}
}

// purge is the purge job: delete delivery log rows older than 30 days, of every company,
// through the SECURITY DEFINER function webhook_purge (migrations/).
func (m *Module) purge(ctx context.Context) error {
	var n int64
	if err := m.d.Pool.QueryRow(ctx, purgeQuery).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		m.d.Log.Info().Int64("deliveries", n).Msg("purged webhook delivery log")
	}
	return nil
}
