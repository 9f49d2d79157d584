// Package imports serves /imports (issue 25): contact files (CSV or Excel .xlsx) uploaded,
// analysed on a river job before anything is written (format, encoding and delimiter
// detected, a column mapping suggested from German and English headers, every row validated as
// POST /contacts validates, duplicates found by e-mail and company name), then committed on
// request by a second job in batches that resume after a crash without writing a contact twice.
//
// Files: handler.go (the five routes), input.go (the upload's form, the commit's body),
// file.go (reading CSV and xlsx as rows), fields.go (mapping targets, the suggestion, a row
// as a contacts.Doc), analyze.go and commit.go (the two job steps), worker.go (the job),
// view.go. The rules: docs/decisions/imports.md.
package imports

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"
	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Limits of an import (docs/decisions/imports.md "Limits").
const (
	// MaxUpload bounds the uploaded file (bytes): a CSV of 100,000 contacts with 30 columns is
	// about 30 MB; 256 MiB leaves room for wide exports and is read as a stream.
	MaxUpload int64 = 256 << 20
	// MaxXLSX bounds an Excel file: excelize holds the compressed workbook in memory (the sheet
	// itself streams from a temporary file), so its size is the memory one analysis may take.
	MaxXLSX int64 = 64 << 20
	// MaxRows bounds the data rows of one file: more fail the analysis with a message saying
	// to split the file (a 1,048,576-row sheet stops at its 100,001st data row, never read to its end).
	MaxRows = 100_000
	// MaxColumns bounds the columns of the header row.
	MaxColumns = 200
	// MaxCell bounds one cell (characters): longer makes the row invalid, never truncated.
	MaxCell = 1000
	// defaultBatch is how many rows one transaction of the analysis inserts and one of the
	// commit writes.
	defaultBatch = 500
)

// Deps are what the module needs.
type Deps struct {
	Pool     *pgxpool.Pool // the job pool: an import is inserted with its job in one transaction
	DB       *ent.Client   // ent on the job pool, for the worker's transactions
	Bucket   *blob.Bucket  // the uploaded files
	Contacts *contacts.Service
	Now      func() time.Time
	Log      zerolog.Logger
	// BatchSize is the rows of one commit transaction (default 500).
	BatchSize int
	// MaxRows bounds the data rows of a file (default MaxRows; tests lower it).
	MaxRows int
	// AfterBatch, when set, runs after each committed batch of a commit with the rows done so
	// far; an error ends the run there as a crash would (the resumable commit's test).
	AfterBatch func(importID uuid.UUID, committed int) error
}

// Module holds the service, the handler's use cases and the worker.
type Module struct {
	d     Deps
	svc   *Service
	rowTx *jobs.RowTx
}

// Service runs the use cases of the API.
type Service struct{ m *Module }

// New builds the module.
func New(d Deps) *Module {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.BatchSize <= 0 {
		d.BatchSize = defaultBatch
	}
	if d.MaxRows <= 0 {
		d.MaxRows = MaxRows
	}
	m := &Module{d: d}
	m.svc = &Service{m: m}
	m.rowTx = jobs.MustRowTx(d.Pool, "imports")
	return m
}

// Service returns the API's use cases.
func (m *Module) Service() *Service { return m.svc }

// AddWorkers registers the import worker (worker.go).
func (m *Module) AddWorkers(w *river.Workers) { river.AddWorker(w, &Worker{m: m}) }

// withTx runs f in one ent transaction on d.DB pinned as ctx says (a company, or the import's
// creator), with the transaction's client in ctx (tenancy.Client) for the contacts service and
// events.
func (m *Module) withTx(ctx context.Context, f func(ctx context.Context, tx *ent.Tx) error) error {
	tx, err := m.d.DB.Tx(ctx)
	if err != nil {
		return err
	}
	if err := f(tenancy.WithTx(ctx, tx), tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
