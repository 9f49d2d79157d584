package portfolio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/formats/bipro"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/formats/portfoliocsv"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portfoliotransfer"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Args name the transfer a job works on: ids only, never data.
type Args struct {
	CompanyID  uuid.UUID `json:"companyId"`
	TransferID uuid.UUID `json:"transferId"`
	// Commit marks the job of POST …/commit: its runs are short (SliceTime), so its timeout is
	// too, and river rescues it soon after a crash. River does not rescue a job before its own
	// timeout has passed.
	Commit bool `json:"commit,omitempty"`
}

// Kind is the job kind.
func (Args) Kind() string { return "portfolio_transfer" }

// InsertOpts puts transfers on their own queue, apart from webhooks and maintenance.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueuePortfolio, MaxAttempts: 25}
}

// Worker validates a pending transfer and commits a committing one (or a validated one with
// autoCommit). Every step is safe to repeat: validation writes its result once at the end,
// each commit batch writes its contracts and the progress in one transaction under the
// transfer's row lock, so a run killed at any point (kill -9) is taken up by river (rescue,
// retry) and continues after the last committed batch, never writing a contract twice.
type Worker struct {
	river.WorkerDefaults[Args]
	m *Module
}

// Timeout bounds one run: validation reads the whole file (ValidateTimeout, about 1 GB a
// minute); a commit run stops itself after SliceTime.
func (w *Worker) Timeout(job *river.Job[Args]) time.Duration {
	if job.Args.Commit {
		return 2 * w.m.d.SliceTime
	}
	return w.m.d.ValidateTimeout
}

func tenancyCtx(ctx context.Context, tx *ent.Tx) context.Context {
	return tenancy.WithClient(ctx, tx.Client())
}

// Work runs the next step of the transfer. Errors that another attempt may not meet (the
// database, the blob storage, a crash) are river's to retry. Two end the transfer instead, as
// failed with a message (issue 20, item 7): a run that times out (the same file would take as
// long again: it was retried 25 times, 10 minutes each, the transfer left pending without an
// error), and the last attempt's failure (the transfer would stay pending or committing for
// ever). Parse errors fail it where they occur (validate, commit).
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	err := w.work(ctx, job)
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	switch {
	case err == nil || errors.As(err, &snooze) || errors.As(err, &cancel):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		step := "validation"
		if job.Args.Commit {
			step = "commit"
		}
		detail := fmt.Sprintf("the %s run did not finish within %s", step, w.Timeout(job))
		if job.Args.Commit {
			detail += "; the contracts of its finished batches stay, a new transfer of the file continues from there"
		}
		w.failJob(ctx, job, "timeout", detail)
		return river.JobCancel(fmt.Errorf("portfolio transfer %s: %s: %w", job.Args.TransferID, detail, err))
	case job.Attempt >= job.MaxAttempts:
		w.failJob(ctx, job, "processing_failed",
			fmt.Sprintf("processing failed %d times, the last time at %s (see the server log)", job.Attempt,
				w.m.d.Now().UTC().Format(time.RFC3339)))
	}
	return err
}

// failJob marks the job's transfer failed unless it has ended. ctx may be over: the update has
// a few seconds of its own. A failure is logged only (the job ends either way).
func (w *Worker) failJob(ctx context.Context, job *river.Job[Args], code, detail string) {
	ctx, cancel := context.WithTimeout(tenancy.WithCompany(context.WithoutCancel(ctx), job.Args.CompanyID), 10*time.Second)
	defer cancel()
	err := withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
		_, err := tx.PortfolioTransfer.Update().Where(portfoliotransfer.ID(job.Args.TransferID),
			portfoliotransfer.StatusNotIn(portfoliotransfer.StatusCommitted, portfoliotransfer.StatusFailed)).
			SetStatus(portfoliotransfer.StatusFailed).SetError(code + ": " + detail).Save(ctx)
		return err
	})
	if err != nil {
		w.m.d.Log.Error().Err(err).Str("transfer_id", job.Args.TransferID.String()).Msg("portfolio transfer: mark failed")
	}
}

// work runs the next step of the transfer.
func (w *Worker) work(ctx context.Context, job *river.Job[Args]) error {
	ctx = tenancy.WithCompany(ctx, job.Args.CompanyID)
	var t *ent.PortfolioTransfer
	err := withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		t, err = tx.PortfolioTransfer.Get(ctx, job.Args.TransferID)
		return err
	})
	if ent.IsNotFound(err) {
		return river.JobCancel(fmt.Errorf("portfolio transfer %s is gone", job.Args.TransferID))
	}
	if err != nil {
		return err
	}
	switch t.Status {
	case portfoliotransfer.StatusPending, portfoliotransfer.StatusValidating:
		if t, err = w.validate(ctx, t); err != nil || t.Status != portfoliotransfer.StatusCommitting {
			return err
		}
		fallthrough
	case portfoliotransfer.StatusCommitting:
		done, err := w.commit(ctx, t)
		if err != nil {
			return err
		}
		if !done {
			return river.JobSnooze(time.Millisecond) // continue in a fresh run
		}
	}
	return nil
}

// storage is the stored file as the format readers read it. It keeps the error of reading the
// file itself, the blob storage's: worth another attempt. Any other error a reader returns is
// the file's (readError).
type storage struct {
	r   io.ReadCloser
	err error
}

func (s *storage) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return n, err
}

// readError is an error of reading the file: the format reader's (not the storage's), so the
// same file gives it again.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// readFailed returns err as a *readError when it is the file's fault: the format's refusal
// (gdv.FormatError), a ZIP entry that will not decompress, a reader's bare io.EOF, anything
// else a reader says. Errors of the blob storage, of temporary files (a full disk) and of ctx
// stay as they are: another attempt may not meet them.
// The storage's error decides first: a reader may report the file's end cut short by it as a
// format error.
func readFailed(err error, st *storage) error {
	var pe *fs.PathError
	if err == nil || st.err != nil || errors.As(err, &pe) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &readError{err: err}
}

// open returns the format's reader on the stored file and a function that releases it. An error
// that is the file's is a *readError.
func (w *Worker) open(ctx context.Context, t *ent.PortfolioTransfer) (gdv.Source, func(), error) {
	r, err := w.m.d.Bucket.NewReader(ctx, t.BlobKey, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("open portfolio file: %w", err)
	}
	st := &storage{r: r}
	src, release, err := w.format(st, t)
	if err != nil {
		r.Close()
		return nil, nil, readFailed(err, st)
	}
	return &fileSource{Source: src, st: st}, func() { release(); r.Close() }, nil
}

// fileSource marks the errors of a format reader that are the file's (readFailed).
type fileSource struct {
	gdv.Source
	st *storage
}

func (f *fileSource) Next() (gdv.Event, error) {
	ev, err := f.Source.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		return ev, readFailed(err, f.st)
	}
	return ev, err
}

// format opens the reader of the transfer's format on r.
func (w *Worker) format(r io.Reader, t *ent.PortfolioTransfer) (gdv.Source, func(), error) {
	opt := gdv.Options{Encoding: t.Encoding}
	switch t.Format {
	case portfoliotransfer.FormatGdvVuVermittler:
		rd, err := gdv.NewReader(r, opt)
		if err != nil {
			return nil, nil, err
		}
		return rd, func() {}, nil
	case portfoliotransfer.FormatBipro4304:
		sh, err := bipro.Open(r, bipro.Options{MaxUnzipped: w.m.d.MaxUnzipped, MaxRatio: w.m.d.MaxZipRatio})
		if err != nil {
			return nil, nil, err
		}
		return sh.Reader(opt), func() { sh.Close() }, nil
	case portfoliotransfer.FormatCsv:
		mp, dp := csvOptions(t.Mapping)
		rd, err := portfoliocsv.NewReader(r, portfoliocsv.Options{Mapping: mp, Encoding: t.Encoding, DecimalPoint: dp})
		if err != nil {
			var me *portfoliocsv.MappingError
			if errors.As(err, &me) { // the snapshot was validated when stored: not expected
				return nil, nil, &gdv.FormatError{Code: "invalid_mapping", Detail: me.Error()}
			}
			return nil, nil, err
		}
		return rd, func() {}, nil
	}
	return nil, nil, &gdv.FormatError{Code: "format_not_available", Detail: "format " + string(t.Format) + " is not read yet"}
}

// fail marks the transfer failed: the file cannot be read (cause is a *readError), with the
// format's code and message ("unreadable" and the reader's error when the format gave none: a
// bare EOF becomes "unexpected end of the file").
func (w *Worker) fail(ctx context.Context, t *ent.PortfolioTransfer, cause error) (*ent.PortfolioTransfer, error) {
	var out *ent.PortfolioTransfer
	code := "unreadable"
	var fe *gdv.FormatError
	if errors.As(cause, &fe) && fe.Code != "" {
		code = fe.Code
	}
	if errors.Is(cause, io.EOF) || errors.Is(cause, io.ErrUnexpectedEOF) {
		cause = fmt.Errorf("unexpected end of the file (%w)", cause)
	}
	err := withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		out, err = tx.PortfolioTransfer.UpdateOne(t).SetStatus(portfoliotransfer.StatusFailed).
			SetError(code + ": " + cause.Error()).Save(ctx)
		return err
	})
	return out, err
}

// each runs f for every contract of the file in order, with its 0-based index; src is
// positioned before contract from (0: a file just opened). It stops when ctx ends, also
// between the flushes of f (a file of no contracts, a ZIP entry of blank lines).
func each(ctx context.Context, src gdv.Source, from int64, f func(i int64, c *gdv.Contract) error, issue func(*gdv.Issue), pkg func(*gdv.Package)) error {
	i := from
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch ev.Kind {
		case gdv.KindContract:
			if err := f(i, ev.Contract); err != nil {
				return err
			}
			i++
		case gdv.KindIssue:
			if issue != nil {
				issue(ev.Issue)
			}
		case gdv.KindPackageEnd:
			if pkg != nil {
				pkg(ev.Package)
			}
		}
	}
}

// openFile is a transfer's file open in a commit run that ended its slice, positioned before
// contract next: the next run of the transfer in this process continues from there instead of
// reading the file again from its start. Without it each 15 s slice first parsed every
// contract before its own (at contract 50,000 about 1.4 s of CPU, several seconds on a loaded
// machine), so the commit slowed as it went on.
type openFile struct {
	src     gdv.Source
	release func()
	next    int64
	kept    time.Time
}

// keepFile leaves f for the next run of transfer id.
func (m *Module) keepFile(id uuid.UUID, f *openFile) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.files[id]; old != nil {
		old.release()
	}
	f.kept = m.d.Now()
	m.files[id] = f
}

// takeFile returns the file kept for transfer id if it is positioned before contract next (no
// other run, here or in another process, got further meanwhile), else nil. Files kept longer
// than two slices are closed: their transfer went on elsewhere, ended or failed.
func (m *Module) takeFile(id uuid.UUID, next int64) *openFile {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.files[id]
	delete(m.files, id)
	for k, o := range m.files {
		if m.d.Now().Sub(o.kept) > 2*m.d.SliceTime {
			o.release()
			delete(m.files, k)
		}
	}
	if f != nil && f.next != next {
		f.release()
		return nil
	}
	return f
}
