// Package portfolio serves /portfolio-transfers: a portfolio file (GDV VU-Vermittler, BiPRO
// 430.4) stored in blob storage, validated by a background job into a summary and issues, and
// committed, on request or at once (autoCommit), in batches that survive a crash of the
// process: each batch commits its contracts and the transfer's progress in one transaction.
package portfolio

import (
	"context"

	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/contracts"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
)

// Deps are what the module needs.
type Deps struct {
	Pool      *pgxpool.Pool // the job pool: transfers are inserted with their job in one transaction (jobs.RowTx)
	DB        *ent.Client   // ent on the job pool, for the workers' transactions
	Bucket    *blob.Bucket
	Events    *events.Service
	Contracts *contracts.Service
	Now       func() time.Time
	Log       zerolog.Logger
	// BatchSize is how many contracts one commit transaction writes (default 500).
	BatchSize int
	// SliceTime bounds one run of a commit job; it then snoozes and continues in a fresh run,
	// so no run comes near the job timeout or river's rescue (default 15 s).
	SliceTime time.Duration
	// ValidateTimeout bounds a validation run (default 10 min): it reads the whole file, about
	// 1 GB a minute. A run that times out fails the transfer.
	ValidateTimeout time.Duration
	// MaxUnzipped and MaxZipRatio bound the ZIP documents of a BiPRO shipment (bipro.Options;
	// defaults bipro.DefaultMaxUnzipped, bipro.DefaultMaxRatio).
	MaxUnzipped int64
	MaxZipRatio int64
}

// Module holds the service and the worker.
type Module struct {
	d Deps
	// rowTx writes a transfer and inserts its job in one transaction (jobs.RowTx).
	rowTx *jobs.RowTx
	batch atomic.Int64 // contracts per commit batch now (adaptBatch), at most d.BatchSize
	mu    sync.Mutex
	files map[uuid.UUID]*openFile // files of commit runs that ended their slice (keepFile)
}

// batchSize is how many contracts the next commit batch takes.
func (m *Module) batchSize() int {
	if n := m.batch.Load(); n > 0 {
		return int(n)
	}
	return m.d.BatchSize
}

// adaptBatch sizes commit batches by how long the last one took: a batch must end well inside
// a run's slice (the job times out at 2 × SliceTime and its batch is rolled back), also on a
// loaded database. Over a quarter of the slice halves the size (not below 20); under a
// sixteenth doubles it back towards BatchSize. Only the speed changes: the transfer's
// committed count resumes at any size.
func (m *Module) adaptBatch(took time.Duration) {
	n := int64(m.batchSize())
	switch {
	case took > m.d.SliceTime/4 && n > 20:
		m.batch.Store(max(20, n/2))
	case took < m.d.SliceTime/16 && n < int64(m.d.BatchSize):
		m.batch.Store(min(int64(m.d.BatchSize), n*2))
	}
}

// analyzeFrom is the committed count of a transfer at which the commit first refreshes the
// statistics of the tables it grows; then at every doubling (1,000, 2,000, 4,000 …).
const analyzeFrom = 500

// analyzeIfGrown refreshes the statistics of contacts, contracts and external_refs
// (portfolio_analyze, migrations/20261126060000; at most once every 30 seconds whoever calls,
// 20261127110100) when a batch took the transfer's committed count from before to after across
// analyzeFrom × 2^k: a commit of n contracts asks about log2(n/500) times, whatever autovacuum
// does. Without statistics the planner may read all of a company's rows for every lookup (see
// the migration); ANALYZE also makes every connection replan the statements it cached while
// the tables were small. A failure is logged only: the commit is right without it, just slower.
func (m *Module) analyzeIfGrown(ctx context.Context, before, after int64) {
	due := false
	for t := int64(analyzeFrom); t <= after; t *= 2 {
		if t > before {
			due = true
			break
		}
	}
	if !due {
		return
	}
	began := m.d.Now()
	var ran bool
	if err := m.d.Pool.QueryRow(ctx, analyzeTables).Scan(&ran); err != nil {
		m.d.Log.Warn().Err(err).Msg("portfolio commit: analyse tables")
		return
	}
	m.d.Log.Debug().Int64("committed", after).Bool("ran", ran).Dur("took", m.d.Now().Sub(began)).
		Msg("portfolio commit: tables analysed (ran false: another call did within 30 s)")
}

// New builds the module.
func New(d Deps) *Module {
	if d.BatchSize <= 0 {
		d.BatchSize = 500
	}
	if d.SliceTime <= 0 {
		d.SliceTime = 15 * time.Second
	}
	if d.ValidateTimeout <= 0 {
		d.ValidateTimeout = 10 * time.Minute
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	m := &Module{d: d, files: map[uuid.UUID]*openFile{}}
	m.rowTx = jobs.MustRowTx(d.Pool, "portfolio")
	return m
}

// AddWorkers registers the transfer worker.
func (m *Module) AddWorkers(w *river.Workers) { river.AddWorker(w, &Worker{m: m}) }

// Service returns the API service.
func (m *Module) Service() *Service { return &Service{m: m} }

func withTx(ctx context.Context, db *ent.Client, f func(ctx context.Context, tx *ent.Tx) error) error {
	tx, err := db.Tx(ctx)
	if err != nil {
		return err
	}
	if err := f(tenancyCtx(ctx, tx), tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
