package extractions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/points"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contractextraction"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Args name the extraction a job works on: ids only, never data.
type Args struct {
	CompanyID    uuid.UUID `json:"companyId"`
	ExtractionID uuid.UUID `json:"extractionId"`
}

// Kind is the job kind.
func (Args) Kind() string { return "contract_extraction" }

// InsertOpts puts extractions on the portfolio queue: long subprocess runs (OCR), two at a time
// per process, apart from webhook deliveries and mail.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueuePortfolio, MaxAttempts: 5}
}

// runTimeout bounds one run: MaxPages pages of OCR (about 1.4 s a page, two at a time on two
// cores: BenchmarkOCR3Pages; a page of a poor scan takes far longer) with margin, under river's
// rescue (JOBS_RESCUE_AFTER, default 2 minutes), so a running extraction is not taken over;
// should it be (a longer run, a shorter setting), the second run's result is dropped by the
// status check under the row lock and the refund happens once.
const runTimeout = 100 * time.Second

// Worker reads a queued extraction's document and stores the fields found. A document the
// tools cannot read, or a tool the server lacks, fails the extraction with the reason and
// refunds its points (no retry); other errors (database, blob storage) are river's to retry,
// and the last attempt's fails it too: an extraction never stays queued or processing for ever.
type Worker struct {
	river.WorkerDefaults[Args]
	m *Module
}

// Timeout bounds one run.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return runTimeout }

// Work runs the extraction.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	err := w.work(ctx, job.Args)
	var cancel *river.JobCancelError
	switch {
	case err == nil || errors.As(err, &cancel):
		return err
	case errors.Is(err, errUnreadable), errors.Is(err, errNoTool):
		w.fail(ctx, job.Args, err.Error())
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		w.fail(ctx, job.Args, fmt.Sprintf("the extraction did not finish within %s", runTimeout))
		return river.JobCancel(err)
	case job.Attempt >= job.MaxAttempts:
		w.fail(ctx, job.Args, fmt.Sprintf("the extraction failed %d times (see the server log)", job.Attempt))
	}
	return err
}

// tx runs f in a transaction of the job's company.
func (w *Worker) tx(ctx context.Context, company uuid.UUID, f func(ctx context.Context) error) error {
	return tenancy.CompanyTx(ctx, w.m.d.DB, company, f)
}

// fail marks the extraction failed unless it has ended, and refunds its points with a ledger
// line naming it, in one transaction.
func (w *Worker) fail(ctx context.Context, a Args, msg string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if utf8.RuneCountInString(msg) > 2000 {
		msg = string([]rune(msg)[:2000])
	}
	err := w.tx(ctx, a.CompanyID, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		e, err := db.ContractExtraction.Query().Where(contractextraction.ID(a.ExtractionID),
			contractextraction.StatusIn(contractextraction.StatusQueued, contractextraction.StatusProcessing)).ForUpdate().Only(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := db.ContractExtraction.UpdateOne(e).SetStatus(contractextraction.StatusFailed).SetError(msg).Exec(ctx); err != nil {
			return err
		}
		return points.Refund(ctx, e.Points, points.For{ExtractionID: &e.ID})
	})
	if err != nil {
		w.m.d.Log.Error().Err(err).Str("extraction_id", a.ExtractionID.String()).Msg("extraction: mark failed")
	}
}

// work reads the document and stores the fields unless the extraction has ended.
func (w *Worker) work(ctx context.Context, a Args) error {
	var (
		e   *ent.ContractExtraction
		doc *ent.Document
	)
	err := w.tx(ctx, a.CompanyID, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		var err error
		if e, err = db.ContractExtraction.Get(ctx, a.ExtractionID); err != nil {
			return err
		}
		if e.Status == contractextraction.StatusQueued {
			// Seen by clients polling; a crash leaves it processing, the next attempt reads again.
			if e, err = db.ContractExtraction.UpdateOne(e).SetStatus(contractextraction.StatusProcessing).Save(ctx); err != nil {
				return err
			}
		}
		if e.Status != contractextraction.StatusProcessing {
			return nil
		}
		doc, err = db.Document.Get(ctx, e.DocumentID)
		return err
	})
	if ent.IsNotFound(err) {
		// The document (or the extraction with its contact) was deleted meanwhile.
		if e != nil {
			return fmt.Errorf("%w: the document was deleted", errUnreadable)
		}
		return river.JobCancel(fmt.Errorf("extraction %s is gone", a.ExtractionID))
	}
	if err != nil || e.Status != contractextraction.StatusProcessing {
		return err
	}
	content, err := w.content(ctx, a.CompanyID, doc)
	if err != nil {
		return err
	}
	base, _, _ := strings.Cut(doc.ContentType, ";")
	text, err := w.m.d.Reader.Read(ctx, strings.TrimSpace(base), content)
	if err != nil {
		return err
	}
	return w.tx(ctx, a.CompanyID, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		e, err := db.ContractExtraction.Query().Where(contractextraction.ID(a.ExtractionID)).ForUpdate().Only(ctx)
		if err != nil || e.Status != contractextraction.StatusProcessing {
			return err // a second run finished it meanwhile
		}
		names, err := insurers(ctx)
		if err != nil {
			return err
		}
		ct := ""
		if e.ContractType != nil {
			ct = *e.ContractType
		}
		fields := Extract(text.Pages, names, ct)
		e, err = db.ContractExtraction.UpdateOne(e).SetStatus(contractextraction.StatusCompleted).SetFields(fields).
			SetMethod(text.Method).SetPages(text.Total).SetCompletedAt(w.m.d.Now()).Save(ctx)
		if err != nil {
			return fmt.Errorf("store extraction %s: %w", e.ID, err)
		}
		if e.AutoApply {
			return w.autoApply(ctx, e)
		}
		return nil
	})
}

// content reads the document's file (its sha256 checked as it is read).
func (w *Worker) content(ctx context.Context, company uuid.UUID, d *ent.Document) ([]byte, error) {
	var b []byte
	err := w.tx(ctx, company, func(ctx context.Context) error {
		r, err := w.m.d.Docs.Open(ctx, d)
		if err != nil {
			return err
		}
		defer r.Close()
		b, err = io.ReadAll(r)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", d.ID, err)
	}
	return b, nil
}

// insurers are the catalog's names, for the insurer rule.
func insurers(ctx context.Context) ([]InsurerName, error) {
	all, err := tenancy.Client(ctx).Insurer.Query().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read insurers: %w", err)
	}
	out := make([]InsurerName, len(all))
	for i, in := range all {
		out[i] = InsurerName{ID: in.ID, Name: in.Name}
	}
	return out, nil
}

// autoApply writes the fields at or above AutoApplyThreshold to a new contract of the
// document's contact, inside a savepoint: fields a contract cannot be made of (no insurer
// found, an invalid value) leave the extraction completed with the reason in error, nothing
// written, for the broker to apply by hand.
func (w *Worker) autoApply(ctx context.Context, e *ent.ContractExtraction) error {
	chosen := map[string]any{}
	for _, f := range e.Fields {
		if f.Confidence >= AutoApplyThreshold && applicable(f) {
			chosen[f.Key] = f.Value
		}
	}
	err := tenancy.Savepoint(ctx, func() error {
		_, err := w.m.write(ctx, e, chosen)
		return err
	})
	if err == nil {
		return nil
	}
	msg, ok := refusal(err)
	if !ok {
		return err // the database or the like: the job is retried
	}
	return tenancy.Client(ctx).ContractExtraction.UpdateOneID(e.ID).SetError(msg).Exec(ctx)
}

func applicable(f schematype.ExtractedField) bool {
	for _, k := range Applicable {
		if k == f.Key {
			return true
		}
	}
	return false
}

// refusal is the message of an error that refuses the auto-applied contract (a 422 or 409 an
// API client would get), and whether it is one.
func refusal(err error) (string, bool) {
	var inv *errs.Invalid
	if errors.As(err, &inv) {
		parts := make([]string, len(inv.Errors))
		for i, f := range inv.Errors {
			parts[i] = f.Field + ": " + f.Code
		}
		return "autoApply: no contract written (" + strings.Join(parts, ", ") + ")", true
	}
	var e *errs.E
	if errors.As(err, &e) && (errors.Is(err, errs.ErrConflict) || errors.Is(err, errs.ErrNotFound)) {
		return "autoApply: no contract written (" + e.Code + ": " + e.Detail + ")", true
	}
	return "", false
}
