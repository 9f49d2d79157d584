package portfolio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portfoliotransfer"
)

// MaxIssues is how many issues a transfer keeps (all are counted in the summary).
const MaxIssues = 1000

// validate reads the whole file and plans every contract, writing nothing but the transfer:
// status validated (committing with autoCommit), summary and issues.
func (w *Worker) validate(ctx context.Context, t *ent.PortfolioTransfer) (*ent.PortfolioTransfer, error) {
	src, release, err := w.open(ctx, t)
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return w.fail(ctx, t, err)
		}
		return nil, err
	}
	defer release()
	im := newImporter(w.m, t)
	var issues []map[string]any
	var packages []map[string]any
	counts := map[string]int64{}
	reasons := map[string]int64{}
	persons := map[string]bool{} // person keys of new contracts, to count people once
	var personsNew, personsMatched int64
	var batch []*gdv.Contract
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
			for _, c := range batch {
				p, err := im.plan(ctx, c, c.Line, false)
				if err != nil {
					return err
				}
				counts[p.action]++
				if p.reason != "" {
					reasons[p.reason]++
				}
				if p.action == actCreate && !persons[p.key] {
					persons[p.key] = true
					_, found, err := im.contactFor(ctx, p.key, p.person, false)
					if err != nil {
						return err
					}
					if found {
						personsMatched++
					} else {
						personsNew++
					}
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	err = each(ctx, src, 0, func(_ int64, c *gdv.Contract) error {
		batch = append(batch, c)
		if len(batch) >= w.m.d.BatchSize {
			return flush()
		}
		return nil
	}, func(is *gdv.Issue) {
		if len(issues) < MaxIssues {
			issues = append(issues, map[string]any{"line": is.Line, "package": is.Package, "source": is.Source,
				"satzart": is.Satzart, "field": is.Field, "severity": string(is.Severity), "code": is.Code,
				"message": is.Message, "raw": is.Raw})
		}
	}, func(p *gdv.Package) {
		if len(packages) < 100 {
			packages = append(packages, map[string]any{"number": p.Number, "vuNumber": p.VUNumber, "sender": p.Sender,
				"records": p.Records, "contracts": p.Contracts, "insurers": p.Insurers, "check": p.Check,
				"headerMissing": p.HeaderMissing, "source": p.Source})
		}
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		var re *readError
		if errors.As(err, &re) {
			return w.fail(ctx, t, err)
		}
		return nil, err
	}
	s := src.Summary()
	summary := map[string]any{
		"encoding": s.Encoding, "records": s.Records, "recordsBySatzart": s.RecordsBySatzart,
		"packages": packages, "insurers": s.Insurers, "contracts": s.Contracts, "persons": s.Persons,
		"personsByRole": s.PersonsByRole, "warnings": s.Warnings, "errors": s.Errors, "issuesByCode": s.IssuesByCode,
		"issuesSuppressed":  s.IssuesSuppressed + max(0, s.Warnings+s.Errors-int64(len(issues))-s.IssuesSuppressed),
		"contractsToCreate": counts[actCreate], "contractsToUpdate": counts[actUpdate],
		"contractsUnchanged": counts[actUnchanged], "contractsSkipped": counts[actSkip], "skippedByReason": reasons,
		"personsToCreate": personsNew, "personsMatched": personsMatched,
	}
	status := portfoliotransfer.StatusValidated
	if t.AutoCommit {
		status = portfoliotransfer.StatusCommitting
	}
	var out *ent.PortfolioTransfer
	err = withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
		cur, err := tx.PortfolioTransfer.Query().Where(portfoliotransfer.ID(t.ID)).ForUpdate().Only(ctx)
		if err != nil {
			return err
		}
		if cur.Status != portfoliotransfer.StatusPending && cur.Status != portfoliotransfer.StatusValidating {
			out = cur // another run finished first
			return nil
		}
		if issues == nil {
			issues = []map[string]any{}
		}
		out, err = cur.Update().SetStatus(status).SetSummary(summary).SetIssues(issues).
			SetProgress(map[string]int64{"total": s.Contracts}).SetValidatedAt(w.m.d.Now()).Save(ctx)
		return err
	})
	return out, err
}

// commit writes the next batches of a committing transfer, each in one transaction with the
// transfer's progress, for at most SliceTime. done reports the transfer ended: committed, or
// failed on a file it cannot read.
func (w *Worker) commit(ctx context.Context, t *ent.PortfolioTransfer) (bool, error) {
	start := t.Committed
	f := w.m.takeFile(t.ID, start)
	if f == nil {
		// Opened to outlive this run (keepFile): the blob reader must not end with ctx.
		src, release, err := w.open(context.WithoutCancel(ctx), t)
		if err != nil {
			var re *readError
			if errors.As(err, &re) { // validated, so not expected: the file changed in storage
				_, ferr := w.fail(ctx, t, err)
				return ferr == nil, ferr // done: the transfer has ended
			}
			return false, err
		}
		f = &openFile{src: src, release: release}
	}
	kept := false
	defer func() {
		if !kept {
			f.release()
		}
	}()
	src := f.src
	deadline := w.m.d.Now().Add(w.m.d.SliceTime)
	im := newImporter(w.m, t)
	var batch []*gdv.Contract
	errRestart := errors.New("restart")
	var took time.Duration // the last batch's wall time
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		began := w.m.d.Now()
		defer func() { took = w.m.d.Now().Sub(began) }()
		err := withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
			cur, err := tx.PortfolioTransfer.Query().Where(portfoliotransfer.ID(t.ID)).ForUpdate().Only(ctx)
			if err != nil {
				return err
			}
			if cur.Status != portfoliotransfer.StatusCommitting || cur.Committed != start {
				return errRestart // another run got further: start over from its progress
			}
			prog := cur.Progress
			if prog == nil {
				prog = map[string]int64{}
			}
			if err := im.prefetch(ctx, batch); err != nil {
				return err
			}
			defer func() { im.idx = nil }()
			for _, c := range batch {
				p, err := im.plan(ctx, c, c.Line, true)
				if err != nil {
					return err
				}
				act, newContact, err := im.write(ctx, p)
				if errors.Is(err, errs.ErrInvalid) || errors.Is(err, errs.ErrConflict) {
					act, err = actSkip, nil // refused before any SQL write: the transaction is intact
				}
				if err != nil {
					return err
				}
				prog[act]++
				prog["done"]++
				if newContact {
					prog["contactsCreated"]++
				}
			}
			_, err = cur.Update().SetCommitted(start + int64(len(batch))).SetProgress(prog).Save(ctx)
			return err
		})
		if err == nil {
			w.m.analyzeIfGrown(ctx, start, start+int64(len(batch)))
			start += int64(len(batch))
		}
		batch = batch[:0]
		return err
	}
	errSlice := errors.New("slice over")
	err := each(ctx, src, f.next, func(i int64, c *gdv.Contract) error {
		if i < start {
			return nil
		}
		batch = append(batch, c)
		if len(batch) >= w.m.batchSize() {
			if err := flush(); err != nil {
				return err
			}
			w.m.adaptBatch(took)
			// Stop when the next batch would likely end after the slice: a batch that
			// outlives the job's timeout (2 × SliceTime) is rolled back and retried later.
			if w.m.d.Now().Add(took).After(deadline) {
				return errSlice
			}
		}
		return nil
	}, nil, nil)
	if err == nil {
		err = flush()
	}
	switch {
	case errors.Is(err, errSlice):
		// The reader stands before contract start: the next run goes on from there.
		kept = true
		f.next = start
		w.m.keepFile(t.ID, f)
		return false, nil
	case errors.Is(err, errRestart):
		return false, nil
	case errors.As(err, new(*readError)):
		_, ferr := w.fail(ctx, t, err)
		return ferr == nil, ferr // done: the transfer has ended
	case err != nil:
		return false, fmt.Errorf("commit portfolio transfer %s: %w", t.ID, err)
	}
	err = withTx(ctx, w.m.d.DB, func(ctx context.Context, tx *ent.Tx) error {
		_, err := tx.PortfolioTransfer.Update().Where(portfoliotransfer.ID(t.ID),
			portfoliotransfer.StatusEQ(portfoliotransfer.StatusCommitting), portfoliotransfer.Committed(start)).
			SetStatus(portfoliotransfer.StatusCommitted).SetCommittedAt(w.m.d.Now()).Save(ctx)
		return err
	})
	return err == nil, err
}
