package commissions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/formats/commission"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/commissionentry"
	"github.com/brokerdesk/brokerdesk/ent/commissionstatement"
	"github.com/brokerdesk/brokerdesk/ent/insurer"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// Args name the statement a parse job works on: ids only, never data.
type Args struct {
	CompanyID   uuid.UUID `json:"companyId"`
	StatementID uuid.UUID `json:"statementId"`
}

// Kind is the job kind.
func (Args) Kind() string { return "commission_statement" }

// InsertOpts puts statements on the portfolio queue: long file reads, two at a time per
// process, apart from webhook deliveries and maintenance.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueuePortfolio, MaxAttempts: 10}
}

// Bounds of the parse.
const (
	// parseTimeout bounds one run: a 50,000-entry file takes seconds; the margin is for a
	// loaded database.
	parseTimeout = 5 * time.Minute
	// entryBatch is how many entries one INSERT writes (ent's CreateBulk: one multi-row
	// statement, 17 parameters an entry, well under PostgreSQL's 65,535).
	entryBatch = 1000
	// maxIssues bounds the issues stored on a statement (the reader's and the matcher's).
	maxIssues = 1000
)

func (m *Module) addWorkers(w *river.Workers) { river.AddWorker(w, &Worker{m: m}) }

// Worker parses a queued statement into entries, matches them and records the result. The
// whole parse is one transaction (entries, matches, counts, the statement's state and the
// event): a run killed half-way leaves nothing, and the next attempt starts again from the
// file; a statement already processed or failed is left alone. No entry is ever written twice.
type Worker struct {
	river.WorkerDefaults[Args]
	m *Module
}

// Timeout bounds one run.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return parseTimeout }

// Work runs the parse. A file that is not of its format at all (commission.ErrUnreadable)
// fails the statement with the reader's message; other errors (the database, blob storage)
// are river's to retry, and the last attempt's, or a run out of time, fails it too: a
// statement never stays queued or processing for ever.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	ctx = tenancy.WithCompany(ctx, job.Args.CompanyID)
	err := w.work(ctx, job.Args.StatementID)
	var cancel *river.JobCancelError
	switch {
	case err == nil || errors.As(err, &cancel):
		return err
	case errors.Is(err, commission.ErrUnreadable):
		w.fail(ctx, job.Args.StatementID, err.Error())
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		w.fail(ctx, job.Args.StatementID, fmt.Sprintf("the parse did not finish within %s", parseTimeout))
		return river.JobCancel(err)
	case job.Attempt >= job.MaxAttempts:
		w.fail(ctx, job.Args.StatementID, fmt.Sprintf("processing failed %d times, the last time at %s (see the server log)",
			job.Attempt, w.m.d.Now().UTC().Format(time.RFC3339)))
	}
	return err
}

// fail marks the statement failed unless it has ended, and records
// commission_statement.processed. ctx may be over: the update has a few seconds of its own.
func (w *Worker) fail(ctx context.Context, id uuid.UUID, msg string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if utf8.RuneCountInString(msg) > 1000 {
		msg = string([]rune(msg)[:1000])
	}
	err := w.m.withTx(ctx, func(ctx context.Context, tx *ent.Tx) error {
		n, err := tx.CommissionStatement.Update().Where(commissionstatement.ID(id),
			commissionstatement.ImportStatusIn(commissionstatement.ImportStatusQueued, commissionstatement.ImportStatusProcessing)).
			SetImportStatus(commissionstatement.ImportStatusFailed).SetError(msg).SetProcessedAt(w.m.d.Now()).Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		st, err := tx.CommissionStatement.Get(ctx, id)
		if err != nil {
			return err
		}
		return w.m.d.Events.Record(ctx, "commission_statement.processed", NewStatementView(st))
	})
	if err != nil {
		w.m.d.Log.Error().Err(err).Str("statement_id", id.String()).Msg("commission statement: mark failed")
	}
}

// work parses the statement unless it has ended.
func (w *Worker) work(ctx context.Context, id uuid.UUID) error {
	var st *ent.CommissionStatement
	err := w.m.withTx(ctx, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		if st, err = tx.CommissionStatement.Get(ctx, id); err != nil {
			return err
		}
		if st.ImportStatus == commissionstatement.ImportStatusQueued {
			// Seen by clients polling the statement; a crash leaves it processing, and the
			// next attempt parses again.
			st, err = tx.CommissionStatement.UpdateOne(st).SetImportStatus(commissionstatement.ImportStatusProcessing).Save(ctx)
		}
		return err
	})
	if ent.IsNotFound(err) {
		return river.JobCancel(fmt.Errorf("commission statement %s is gone", id))
	}
	if err != nil {
		return err
	}
	if st.ImportStatus != commissionstatement.ImportStatusProcessing {
		return nil // processed or failed already (a job run twice)
	}
	return w.m.withTx(ctx, func(ctx context.Context, tx *ent.Tx) error {
		// The row lock makes a second run of the same statement wait and then find it done.
		st, err := tx.CommissionStatement.Query().Where(commissionstatement.ID(id)).ForUpdate().Only(ctx)
		if err != nil {
			return err
		}
		if st.ImportStatus != commissionstatement.ImportStatusProcessing {
			return nil
		}
		return w.parse(ctx, tx, st)
	})
}

// parse reads the file, writes its entries in batches, matches them and records the result.
func (w *Worker) parse(ctx context.Context, tx *ent.Tx, st *ent.CommissionStatement) error {
	r, err := w.m.d.Bucket.NewReader(ctx, st.BlobKey, nil)
	if err != nil {
		return fmt.Errorf("open commission statement file: %w", err)
	}
	defer r.Close()
	p := &parser{ctx: ctx, tx: tx, st: st, vu: map[string]*uuid.UUID{}, now: w.m.d.Now()}
	sum, err := commission.Read(string(st.Format), r, commission.Options{Mapping: st.Mapping, MaxIssues: maxIssues}, p.add)
	if err != nil {
		return err
	}
	if err := p.flush(); err != nil {
		return err
	}
	issues := append(sum.Issues, p.issues...)
	insurerID := st.InsurerID
	if insurerID == nil && sum.VUNumber != "" {
		if insurerID, err = p.insurer(sum.VUNumber); err != nil {
			return err
		}
		if insurerID != nil {
			// The file's own insurer holds for the entries that named none.
			if err := tx.CommissionEntry.Update().Where(commissionentry.StatementID(st.ID), commissionentry.InsurerIDIsNil()).
				SetInsurerID(*insurerID).Exec(ctx); err != nil {
				return fmt.Errorf("set entry insurer: %w", err)
			}
		}
	}
	if insurerID == nil {
		if insurerID, err = singleInsurer(ctx, st.ID); err != nil {
			return err
		}
	}
	matchIssues, err := match(ctx, st.ID, p.now)
	if err != nil {
		return err
	}
	issues = append(issues, matchIssues...)
	if len(issues) > maxIssues {
		issues = issues[:maxIssues]
	}
	var (
		count, matched int
		total          string
		first, last    sql.NullTime
	)
	if err := tenancy.QueryRow(ctx, statementTotals, []any{st.ID}, &count, &matched, &total, &first, &last); err != nil {
		return fmt.Errorf("count statement entries: %w", err)
	}
	sumMoney, err := schematype.ParseMoney(total)
	if err != nil {
		return fmt.Errorf("statement total %q: %w", total, err)
	}
	from, to := sum.PeriodFrom, sum.PeriodTo
	if from == nil && first.Valid {
		from = &first.Time
	}
	if to == nil && last.Valid {
		to = &last.Time
	}
	if issues == nil {
		issues = []schematype.CommissionIssue{}
	}
	st, err = tx.CommissionStatement.UpdateOne(st).SetImportStatus(commissionstatement.ImportStatusProcessed).
		SetNillableInsurerID(insurerID).SetEntryCount(count).SetMatchedCount(matched).SetTotal(sumMoney).
		SetNillablePeriodFrom(from).SetNillablePeriodTo(to).SetIssues(issues).SetError("").
		SetProcessedAt(p.now).Save(ctx)
	if err != nil {
		return fmt.Errorf("record commission statement: %w", err)
	}
	return w.m.d.Events.Record(ctx, "commission_statement.processed", NewStatementView(st))
}

// singleInsurer is the one insurer of a statement's entries, nil when they name none or
// several.
func singleInsurer(ctx context.Context, statement uuid.UUID) (*uuid.UUID, error) {
	rows, err := tenancy.Client(ctx).QueryContext(ctx, entryInsurers, statement)
	if err != nil {
		return nil, fmt.Errorf("read entry insurers: %w", err)
	}
	defer rows.Close()
	var ids []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil || len(ids) != 1 {
		return nil, err
	}
	return &ids[0], nil
}

// maxAmount is the largest amount numeric(14,2) stores.
var maxAmount = decimal.RequireFromString("999999999999.99")

// parser collects a statement's entries into batches.
type parser struct {
	ctx    context.Context
	tx     *ent.Tx
	st     *ent.CommissionStatement
	batch  []*ent.CommissionEntryCreate
	vu     map[string]*uuid.UUID // VU number → insurer (nil: not in the catalog)
	issues []schematype.CommissionIssue
	now    time.Time
}

// add is the reader's callback: one entry becomes one row of the next batch. What the
// columns cannot hold is the file's fault, never a reason to retry: an amount beyond
// numeric(14,2) skips the entry with an issue, over-long texts are cut.
func (p *parser) add(e commission.Entry) error {
	if e.Amount.Decimal().Abs().GreaterThan(maxAmount) || e.BookedOn.Year() < 1 {
		p.issue(e.Line, commission.SeverityError, "entry_out_of_range", "the amount or the booking date is out of range: the entry was skipped")
		return nil
	}
	insurerID := p.st.InsurerID
	if insurerID == nil && e.VUNumber != "" {
		var err error
		if insurerID, err = p.insurer(e.VUNumber); err != nil {
			return err
		}
	}
	number := clip(e.PolicyNumber, 50)
	c := p.tx.CommissionEntry.Create().SetCreatedAt(p.now).SetUpdatedAt(p.now).SetStatementID(p.st.ID).
		SetNillableInsurerID(insurerID).SetPolicyNumber(number).SetPolicyKey(clip(commission.PolicyKey(e.PolicyNumber), 50)).
		SetType(commissionentry.Type(e.Type)).SetCode(clip(e.Code, 20)).SetAmount(e.Amount).
		SetBookedOn(e.BookedOn).SetDescription(clip(e.Description, 500)).SetLine(e.Line)
	p.batch = append(p.batch, c)
	if len(p.batch) >= entryBatch {
		return p.flush()
	}
	return nil
}

// flush writes the collected entries in one multi-row INSERT.
func (p *parser) flush() error {
	if len(p.batch) == 0 {
		return nil
	}
	if err := p.tx.CommissionEntry.CreateBulk(p.batch...).Exec(p.ctx); err != nil {
		return fmt.Errorf("store commission entries: %w", err)
	}
	p.batch = p.batch[:0]
	return nil
}

// insurer looks a VU number up in the catalog once per statement; one it lacks is an issue
// (its entries stay without insurer and unmatched), not an error.
func (p *parser) insurer(vu string) (*uuid.UUID, error) {
	vu = strings.TrimSpace(vu)
	if id, ok := p.vu[vu]; ok {
		return id, nil
	}
	ins, err := p.tx.Insurer.Query().Where(insurer.VuNumber(vu)).Only(p.ctx)
	switch {
	case ent.IsNotFound(err):
		p.vu[vu] = nil
		p.issue(0, commission.SeverityWarning, "unknown_vu_number",
			fmt.Sprintf("VU number %s is not in the insurer catalog: its entries are not matched", vu))
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read insurer %s: %w", vu, err)
	}
	p.vu[vu] = &ins.ID
	return &ins.ID, nil
}

func (p *parser) issue(line int, severity, code, msg string) {
	if len(p.issues) < maxIssues {
		p.issues = append(p.issues, schematype.CommissionIssue{Line: line, Severity: severity, Code: code, Message: msg})
	}
}

// clip cuts s to at most n characters and drops NULs, which PostgreSQL text cannot store.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\x00", "")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n])
	}
	return s
}
