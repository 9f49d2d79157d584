package imports

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactimport"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Args name the import a job works on and the credential that started the step (its id and
// prefix, for the actor of the events the step records): ids only, never data.
type Args struct {
	CompanyID uuid.UUID `json:"companyId"`
	ImportID  uuid.UUID `json:"importId"`
	// Commit marks the job of POST …/commit; without it the job analyses the file.
	Commit    bool      `json:"commit,omitempty"`
	KeyID     uuid.UUID `json:"keyId,omitempty"`
	KeyPrefix string    `json:"keyPrefix,omitempty"`
}

// Kind is the job kind.
func (Args) Kind() string { return "contact_import" }

// InsertOpts puts imports on the portfolio queue: long file reads, two at a time per process,
// apart from webhook deliveries and maintenance.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueuePortfolio, MaxAttempts: 10}
}

func argsOf(company, id uuid.UUID, commit bool, p *tenancy.Principal) Args {
	a := Args{CompanyID: company, ImportID: id, Commit: commit}
	if p != nil {
		a.KeyID, a.KeyPrefix = p.KeyID, p.KeyPrefix
	}
	return a
}

// jobTimeout bounds one run: 100,000 rows are analysed or committed in a few minutes.
const jobTimeout = 30 * time.Minute

// Worker analyses a queued import and commits a running one. The analysis is one
// transaction (rows, counts, status): a run killed half-way leaves nothing and the next
// attempt reads the file again. The commit writes batches, each in one transaction with its
// rows' outcomes and the committed counter, so the next attempt continues after the last
// committed batch and never writes a row twice.
type Worker struct {
	river.WorkerDefaults[Args]
	m *Module
}

// Timeout bounds one run.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return jobTimeout }

// Work runs the step (Run). Its errors (the database, blob storage) are river's to retry; the
// last attempt's, or a run out of time, fails the import: it never stays analyzing or running
// for ever.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	err := w.m.Run(ctx, job.Args)
	if ent.IsNotFound(err) {
		return river.JobCancel(fmt.Errorf("contact import %s is gone", job.Args.ImportID))
	}
	var cancel *river.JobCancelError
	switch {
	case err == nil || errors.As(err, &cancel):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		w.m.fail(ctx, job.Args, fmt.Sprintf("the run did not finish within %s", jobTimeout))
		return river.JobCancel(err)
	case job.Attempt >= job.MaxAttempts:
		w.m.fail(ctx, job.Args, fmt.Sprintf("processing failed %d times, the last time at %s (see the server log)",
			job.Attempt, w.m.d.Now().UTC().Format(time.RFC3339)))
	}
	return err
}

// Run runs the step a names, pinned as the import's creator (pin), and fails the import when
// its file cannot be read (errUnreadable: not CSV, a damaged workbook, more rows than
// MaxRows): the worker's work without river's retries; tests call it to drive a step they
// control.
func (m *Module) Run(ctx context.Context, a Args) error {
	ctx, err := m.pin(ctx, a)
	if err != nil {
		return err
	}
	if a.Commit {
		err = m.commit(ctx, a.ImportID)
	} else {
		err = m.analyze(ctx, a.ImportID)
	}
	if errors.Is(err, errUnreadable) {
		m.fail(ctx, a, detail(err)) // the same file fails again: no retry
		return nil
	}
	return err
}

// pin returns ctx acting as the import's creator: the analysis finds duplicates only among
// the contacts the creator sees, and the commit creates contacts as the creator would through
// POST /contacts (row-level security and the ent rules as for their own key). An import of a
// company-level credential, or whose creator was deleted, works company-wide.
func (m *Module) pin(ctx context.Context, a Args) (context.Context, error) {
	var p *tenancy.Principal
	err := tenancy.CompanyTx(ctx, m.d.DB, a.CompanyID, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		im, err := db.ContactImport.Get(ctx, a.ImportID)
		if err != nil {
			return err
		}
		p = &tenancy.Principal{CompanyID: a.CompanyID, LiveCompanyID: a.CompanyID, KeyID: a.KeyID, KeyPrefix: a.KeyPrefix,
			Kind: tenancy.KindSecret}
		if im.CreatorID != nil {
			u, err := db.User.Get(ctx, *im.CreatorID)
			if err != nil && !ent.IsNotFound(err) {
				return err
			}
			if u != nil {
				p.UserID, p.UserRole = u.ID, string(u.Role)
			}
		}
		policy.Default().VisibilityOf(p)
		return nil
	})
	if err != nil {
		return ctx, err
	}
	return tenancy.WithPrincipal(ctx, p), nil
}

// fail marks the import failed unless it has ended, with msg. ctx may be over: the update has
// a few seconds of its own. It runs company-wide: the import is failed whoever sees it.
func (m *Module) fail(ctx context.Context, a Args, msg string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if utf8.RuneCountInString(msg) > 2000 {
		msg = string([]rune(msg)[:2000])
	}
	err := tenancy.CompanyTx(ctx, m.d.DB, a.CompanyID, func(ctx context.Context) error {
		return tenancy.Client(ctx).ContactImport.Update().Where(contactimport.ID(a.ImportID),
			contactimport.StatusIn(contactimport.StatusQueued, contactimport.StatusAnalyzing, contactimport.StatusRunning)).
			SetStatus(contactimport.StatusFailed).SetError(msg).Exec(ctx)
	})
	if err != nil {
		m.d.Log.Error().Err(err).Str("import_id", a.ImportID.String()).Msg("contact import: mark failed")
	}
}
