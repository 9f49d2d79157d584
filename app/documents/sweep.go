package documents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/brokerdesk/brokerdesk/app/platform/maintenance"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// OrphanAge is how old a blob without row must be before the sweep removes it. A request
// writes its blob at most a few seconds before its row commits (server timeouts: 30 s read,
// 60 s write), so an hour never removes the blob of an upload still under way.
const OrphanAge = time.Hour

// SweepEvery is the cadence of the sweep.
const SweepEvery = 30 * time.Minute

// swept are the blob prefixes the sweep looks after and the table column that names their
// blobs: documents, the files of portfolio transfers, the raw messages and attachments of
// e-mail, the merged PDFs of signature requests and the files of commission statements
// (app/portfolio, app/emails, app/signatures and app/commissions write them the same way: blob
// first, then the row, under
// <prefix>/<company>/…; an e-mail's blobs also go when its mailbox is deleted, a request's when
// its contact is, by cascade).
var swept = []struct{ prefix, query string }{
	{BlobPrefix + "/", documentKeysQuery},
	{"portfolio/", transferKeysQuery},
	{"email-raw/", emailRawKeysQuery},
	{"email-attachments/", emailAttachmentKeysQuery},
	{"signatures/", signatureSourceKeysQuery},
	{"commissions/", commissionStatementKeysQuery},
}

const sweepBatch = 500

// Sweeper removes orphan blobs: blobs under a swept prefix older than OrphanAge that no row
// names (a crash between writing the blob and committing the row, a removal after a commit
// that failed). It never removes a blob a row names, and never touches a row.
type Sweeper struct {
	pool   *pgxpool.Pool
	bucket *blob.Bucket
	now    func() time.Time
	log    zerolog.Logger
}

// NewSweeper returns a sweeper reading rows through pool (app role; each company's keys are
// checked in a transaction pinned to it) and judging age by now.
func NewSweeper(pool *pgxpool.Pool, bucket *blob.Bucket, now func() time.Time, log zerolog.Logger) *Sweeper {
	return &Sweeper{pool: pool, bucket: bucket, now: now, log: log}
}

// SweepResult is what one sweep did.
type SweepResult struct {
	Checked int // blobs old enough to be judged
	Removed int // of them, orphans removed
}

// RunOnce sweeps every prefix once.
func (s *Sweeper) RunOnce(ctx context.Context) (SweepResult, error) {
	var r SweepResult
	cutoff := s.now().Add(-OrphanAge)
	for _, sw := range swept {
		// Keys are <prefix><company>/<random>: group them by company, whose rows RLS shows
		// only inside a transaction pinned to it.
		byCompany := map[uuid.UUID][]string{}
		it := s.bucket.List(&blob.ListOptions{Prefix: sw.prefix})
		for {
			obj, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return r, fmt.Errorf("list blobs %s: %w", sw.prefix, err)
			}
			if obj.IsDir || !obj.ModTime.Before(cutoff) {
				continue
			}
			company, _, _ := strings.Cut(strings.TrimPrefix(obj.Key, sw.prefix), "/")
			id, err := uuid.Parse(company)
			if err != nil {
				s.log.Warn().Str("blob_key", obj.Key).Msg("blob sweep: key names no company, left alone")
				continue
			}
			byCompany[id] = append(byCompany[id], obj.Key)
		}
		for company, keys := range byCompany {
			for len(keys) > 0 {
				batch := keys[:min(sweepBatch, len(keys))]
				keys = keys[len(batch):]
				n, err := s.sweep(ctx, company, sw.query, batch)
				r.Checked += len(batch)
				r.Removed += n
				if err != nil {
					return r, err
				}
			}
		}
	}
	return r, nil
}

// sweep removes the keys of batch that no row of company names.
func (s *Sweeper) sweep(ctx context.Context, company uuid.UUID, query string, batch []string) (int, error) {
	tx, err := tenancy.BeginPgx(tenancy.WithCompany(ctx, company), s.pool)
	if err != nil {
		return 0, fmt.Errorf("blob sweep: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read only
	rows, err := tx.Query(ctx, query, batch)
	if err != nil {
		return 0, fmt.Errorf("blob sweep: read keys: %w", err)
	}
	known := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return 0, fmt.Errorf("blob sweep: read keys: %w", err)
		}
		known[k] = true
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("blob sweep: read keys: %w", err)
	}
	removed := 0
	for _, k := range batch {
		if known[k] {
			continue
		}
		if err := s.bucket.Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return removed, fmt.Errorf("blob sweep: remove %s: %w", k, err)
		}
		removed++
		s.log.Info().Str("blob_key", k).Msg("blob sweep: removed orphan")
	}
	return removed, nil
}

// SweepArgs is the periodic sweep job.
type SweepArgs struct{}

// Kind names the job.
func (SweepArgs) Kind() string { return "blob_orphan_sweep" }

// InsertOpts keep one sweep queued per period.
func (SweepArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByPeriod: SweepEvery}}
}

// work is the sweep job: sweep once, log what went.
func (s *Sweeper) work(ctx context.Context) error {
	r, err := s.RunOnce(ctx)
	if r.Removed > 0 {
		s.log.Info().Int("checked", r.Checked).Int("removed", r.Removed).Msg("blob sweep")
	}
	return err
}

// AddWorkers registers the sweep worker.
func AddWorkers(w *river.Workers, s *Sweeper) {
	river.AddWorker(w, &maintenance.Worker[SweepArgs]{Run: s.work})
}

// PeriodicJobs is the sweep, every SweepEvery, also at start.
func PeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{maintenance.Every(SweepEvery, SweepArgs{})}
}
