package emails

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivertype"

	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/maintenance"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/ent/mailboxfolder"
	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The IMAP sync (docs/decisions/email.md "Sync"). Two jobs:
//
//   - email_sync_due, periodic (every SyncEvery, on river's leader): asks mailbox_sync_due()
//     (a SECURITY DEFINER function only the jobs role may call: the ids of the mailboxes not
//     paused of active companies, nothing else) and queues an email_sync of each.
//   - email_sync (SyncArgs), one run of one mailbox, unique by mailbox while queued or running:
//     one sync at a time per mailbox, however often it is asked for.

// SyncArgs name one run of one mailbox's sync.
type SyncArgs struct {
	CompanyID uuid.UUID `json:"companyId"`
	MailboxID uuid.UUID `json:"mailboxId"`
}

// Kind names the job.
func (SyncArgs) Kind() string { return "email_sync" }

// queuedStates are the states in which a job blocks a second one with the same arguments: the
// required ones plus retryable, not completed (the next period must be able to queue again).
var queuedStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
	rivertype.JobStateRunning, rivertype.JobStateScheduled, rivertype.JobStateRetryable}

// InsertOpts: one run at a time per mailbox. Three attempts: only a run that timed out is
// retried by river (with smaller batches); other failures are recorded on the mailbox and left
// to the next period.
func (SyncArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueMail, MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: queuedStates}}
}

// DueArgs is the periodic visit of every mailbox due.
type DueArgs struct{}

// Kind names the job.
func (DueArgs) Kind() string { return "email_sync_due" }

// InsertOpts keep one repair queued at a time.
func (DueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueDefault, MaxAttempts: 3,
		UniqueOpts: river.UniqueOpts{ByState: queuedStates}}
}

// Watch asks for a visit of every mailbox due now instead of at the next period: the operator
// calls it when it creates a mailbox or sets a new password (and `brokerdesk dev` for the demo
// mailbox), so a new mailbox syncs at once. db reaches river's tables: the jobs role's pool, or
// the owner's connection of an operator command. Idempotent (one visit queued at a time).
func Watch(ctx context.Context, db *sql.DB, company uuid.UUID) error {
	c, err := river.NewClient(riverdatabasesql.New(db), &river.Config{Schema: migrations.RiverSchema})
	if err != nil {
		return fmt.Errorf("watch company %s: %w", company, err)
	}
	if _, err := c.Insert(ctx, DueArgs{}, nil); err != nil {
		return fmt.Errorf("watch company %s: %w", company, err)
	}
	return nil
}

func (m *Module) addSyncWorkers(w *river.Workers) {
	river.AddWorker(w, &syncWorker{m: m})
	river.AddWorker(w, &maintenance.Worker[DueArgs]{Run: m.queueDue})
}

func (m *Module) syncPeriodicJobs() []*river.PeriodicJob {
	return []*river.PeriodicJob{maintenance.Every(m.d.SyncEvery, DueArgs{})}
}

// dueSQL lists the mailboxes to visit (migrations/20261207100200_mailbox_sync_due.sql).
const dueSQL = `SELECT company_id, mailbox_id FROM public.mailbox_sync_due()`

// queueDue queues an email_sync of every mailbox due (unique per mailbox: one already queued or
// running is left alone).
func (m *Module) queueDue(ctx context.Context) error {
	if m.queue == nil {
		return errors.New("email sync: no job queue bound")
	}
	rows, err := m.d.Pool.Query(ctx, dueSQL)
	if err != nil {
		return fmt.Errorf("email sync: mailboxes due: %w", err)
	}
	defer rows.Close()
	var params []river.InsertManyParams
	for rows.Next() {
		var a SyncArgs
		if err := rows.Scan(&a.CompanyID, &a.MailboxID); err != nil {
			return fmt.Errorf("email sync: mailboxes due: %w", err)
		}
		params = append(params, river.InsertManyParams{Args: a})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("email sync: mailboxes due: %w", err)
	}
	for len(params) > 0 { // in slices: one insert of thousands of mailboxes is one statement each
		n := min(len(params), 500)
		if _, err := m.queue.InsertMany(ctx, params[:n]); err != nil {
			return fmt.Errorf("email sync: queue runs: %w", err)
		}
		params = params[n:]
	}
	return nil
}

// syncWorker runs one mailbox's sync.
type syncWorker struct {
	river.WorkerDefaults[SyncArgs]
	m *Module
}

// runBudget is how long one run starts new batches: well inside jobs.JobTimeout, so a run ends
// on its own (and continues in the next, snoozed at once) before river's timeout cuts a batch.
const runBudget = jobs.JobTimeout / 2

// batchSizes by attempt: a run that timed out is retried with smaller batches, so a folder of
// very large messages still makes progress.
var batchSizes = []int{100, 10, 1}

// Work syncs the mailbox. A run that stops at its budget continues at once (snoozed, which costs
// no attempt); a refused login pauses the mailbox and ends; another failure is recorded on the
// mailbox (failing) and left to the next period, not retried: only a run that hit the job's
// timeout is retried, with smaller batches.
func (w *syncWorker) Work(ctx context.Context, job *river.Job[SyncArgs]) error {
	batch := batchSizes[min(job.Attempt, len(batchSizes))-1]
	rep, err := w.m.syncMailbox(ctx, job.Args.CompanyID, job.Args.MailboxID, SyncOptions{Batch: batch, budget: runBudget},
		job.Attempt >= job.MaxAttempts)
	var recorded *recordedError
	switch {
	case err == nil && rep.More:
		return river.JobSnooze(0)
	case err == nil:
		return nil
	case errors.As(err, &recorded):
		w.m.d.Log.Warn().Err(err).Str("mailbox_id", job.Args.MailboxID.String()).Msg("email sync failed")
		return nil
	}
	return err
}

// SyncOptions tune one SyncMailbox run.
type SyncOptions struct {
	// Batch is how many messages one transaction stores (default 100).
	Batch int
	// BeforeCommit runs in each batch's transaction after its messages are written and the
	// folder's last UID moved, right before the commit (tests interrupt a sync there).
	BeforeCommit func(ctx context.Context, folder string, lastUID uint32)
	budget       time.Duration // 0: no limit
}

// SyncReport is what one run did.
type SyncReport struct {
	Selects    int  // SELECTs sent: one per folder (two) when nothing is new
	Fetched    int  // messages fetched
	Stored     int  // of them, stored as new messages
	Duplicates int  // of them, held already (by Message-ID)
	Reports    int  // of them, delivery reports about our messages
	Resets     int  // folders restarted from UID 0 because their UIDVALIDITY changed
	Paused     bool // the login was refused: the mailbox is paused (or was already)
	More       bool // the run stopped at its budget with messages left
}

// recordedError is a sync failure already recorded on the mailbox (failing, sync_error).
type recordedError struct{ err error }

func (e *recordedError) Error() string { return e.err.Error() }
func (e *recordedError) Unwrap() error { return e.err }

// SyncMailbox runs one whole sync of the mailbox of company now (the job runs the same, in
// budgeted runs): what the periodic jobs do for it, for tests and operator commands. A refused
// login pauses the mailbox (Paused, nil error); another failure marks it failing and returns
// the error.
func (m *Module) SyncMailbox(ctx context.Context, company, mailboxID uuid.UUID, o SyncOptions) (SyncReport, error) {
	o.budget = 0
	return m.syncMailbox(ctx, company, mailboxID, o, true)
}

// syncMailbox runs a sync of the mailbox; recordTimeout says whether a run cut by its context's
// deadline is recorded as a failure (the last attempt) or left to river's retry.
func (m *Module) syncMailbox(ctx context.Context, company, mailboxID uuid.UUID, o SyncOptions, recordTimeout bool) (SyncReport, error) {
	if o.Batch <= 0 {
		o.Batch = batchSizes[0]
	}
	ctx = tenancy.WithCompany(ctx, company)
	var rep SyncReport
	var mb *ent.Mailbox
	err := m.companyTx(ctx, company, func(ctx context.Context) error {
		var err error
		mb, err = tenancy.Client(ctx).Mailbox.Get(ctx, mailboxID)
		return err
	})
	if ent.IsNotFound(err) {
		return rep, nil // deleted meanwhile: nothing to do
	}
	if err != nil {
		return rep, fmt.Errorf("email sync: mailbox %s: %w", mailboxID, err)
	}
	if mb.SyncState == mailbox.SyncStatePaused {
		rep.Paused = true
		return rep, nil
	}
	err = m.syncFolders(ctx, mb, o, &rep)
	switch {
	case err == nil:
		if rep.More {
			return rep, nil
		}
		return rep, m.setSyncState(ctx, mb, mailbox.SyncStateActive, "")
	case errors.Is(err, mail.ErrAuth):
		rep.Paused = true
		return rep, m.pause(ctx, mb, err)
	case ctx.Err() != nil && !(recordTimeout && errors.Is(ctx.Err(), context.DeadlineExceeded)):
		return rep, err // stopped (shutdown, cancel) or retried by river: the next run resumes
	}
	// ctx may be over (the last attempt's timeout): the record gets a few seconds of its own.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := m.setSyncState(rctx, mb, mailbox.SyncStateFailing, err.Error()); serr != nil {
		return rep, errors.Join(err, serr)
	}
	return rep, &recordedError{err}
}

// syncFolders logs in and syncs INBOX, then the Sent folder.
func (m *Module) syncFolders(ctx context.Context, mb *ent.Mailbox, o SyncOptions, rep *SyncReport) error {
	password, err := OpenPassword(m.d.Keys, mb)
	if err != nil {
		return err
	}
	c, err := mail.DialIMAP(ctx, m.d.Mail, mail.Server{URL: mb.ImapURL, Username: mb.Username, Password: password})
	if err != nil {
		return err
	}
	defer c.Close()
	// The client's commands do not take a context: closing the connection ends a command
	// under way when the run is cancelled or times out.
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()

	var deadline time.Time
	if o.budget > 0 {
		deadline = m.d.Now().Add(o.budget)
	}
	sent := mb.SentFolder
	if sent == "" {
		if sent, err = c.SentFolder(); err != nil {
			return err
		}
		err := m.companyTx(ctx, mb.CompanyID, func(ctx context.Context) error {
			return tenancy.Client(ctx).Mailbox.UpdateOneID(mb.ID).SetSentFolder(sent).Exec(ctx)
		})
		if err != nil {
			return fmt.Errorf("record sent folder of mailbox %s: %w", mb.ID, err)
		}
		mb.SentFolder = sent
	}
	folders := []string{"INBOX"}
	if !strings.EqualFold(sent, "INBOX") {
		folders = append(folders, sent)
	}
	for _, f := range folders {
		more, err := m.syncFolder(ctx, c, mb, f, o, deadline, rep)
		if err != nil {
			return err
		}
		if more {
			rep.More = true
			return nil
		}
	}
	return nil
}

// syncFolder stores what folder holds above the last UID stored. Each batch is one transaction
// together with the folder's new last UID, so a run killed anywhere resumes exactly after the
// last batch committed: nothing twice (the Message-ID dedupe would catch it anyway), nothing
// missed. more is true when the run stopped at its deadline with messages left.
func (m *Module) syncFolder(ctx context.Context, c *mail.IMAP, mb *ent.Mailbox, folder string, o SyncOptions,
	deadline time.Time, rep *SyncReport) (more bool, err error) {
	st, err := c.Select(folder)
	rep.Selects++
	if err != nil {
		return false, err
	}
	var f *ent.MailboxFolder
	err = m.companyTx(ctx, mb.CompanyID, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		f, err = db.MailboxFolder.Query().Where(mailboxfolder.MailboxID(mb.ID), mailboxfolder.Name(folder)).Only(ctx)
		if ent.IsNotFound(err) {
			f, err = db.MailboxFolder.Create().SetMailboxID(mb.ID).SetName(folder).Save(ctx)
		}
		if err != nil {
			return err
		}
		if f.UIDValidity == int64(st.UIDValidity) {
			return nil
		}
		// A new folder, or the server numbered it anew (UIDVALIDITY changed): our UIDs mean
		// nothing there any more, so start over; what is held already is recognised by its
		// Message-ID and not stored again.
		if f.UIDValidity != 0 {
			rep.Resets++
		}
		f, err = f.Update().SetUIDValidity(int64(st.UIDValidity)).SetLastUID(0).SetHighestModseq(0).Save(ctx)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("folder %q of mailbox %s: %w", folder, mb.ID, err)
	}
	last := uint32(f.LastUID)
	if st.UIDNext != 0 && last+1 >= st.UIDNext {
		return false, nil // nothing new: this SELECT was the whole check
	}
	for {
		if !deadline.IsZero() && m.d.Now().After(deadline) {
			return true, nil
		}
		msgs, err := c.FetchAfter(last, o.Batch)
		if err != nil {
			return false, err
		}
		if len(msgs) == 0 {
			return false, nil
		}
		rep.Fetched += len(msgs)
		next := msgs[len(msgs)-1].UID
		var counts [3]int
		err = m.companyTx(ctx, mb.CompanyID, func(ctx context.Context) error {
			counts = [3]int{}
			for _, msg := range msgs {
				s, err := m.StoreIncoming(ctx, mb, folder, msg.UID, msg.Raw)
				if err != nil {
					return fmt.Errorf("message %d of %q: %w", msg.UID, folder, err)
				}
				counts[s]++
			}
			err := tenancy.Client(ctx).MailboxFolder.UpdateOneID(f.ID).SetLastUID(int64(next)).
				SetHighestModseq(int64(st.HighestModSeq)).Exec(ctx)
			if err != nil {
				return fmt.Errorf("folder %q: last uid: %w", folder, err)
			}
			if o.BeforeCommit != nil {
				o.BeforeCommit(ctx, folder, next)
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		rep.Stored += counts[StoredNew]
		rep.Duplicates += counts[StoredDuplicate]
		rep.Reports += counts[StoredReport]
		last = next
		if len(msgs) < o.Batch {
			return false, nil
		}
	}
}

// setSyncState records the outcome of a run on the mailbox (the app role may update only the
// sync columns and sent_folder).
func (m *Module) setSyncState(ctx context.Context, mb *ent.Mailbox, state mailbox.SyncState, msg string) error {
	return m.companyTx(ctx, mb.CompanyID, func(ctx context.Context) error {
		u := tenancy.Client(ctx).Mailbox.Update().Where(mailbox.ID(mb.ID),
			mailbox.SyncStateNEQ(mailbox.SyncStatePaused)).SetSyncState(state).SetSyncError(capRunes(msg, maxError))
		if state == mailbox.SyncStateActive {
			u.SetSyncedAt(m.d.Now())
		}
		_, err := u.Save(ctx)
		if err != nil {
			return fmt.Errorf("record sync state of mailbox %s: %w", mb.ID, err)
		}
		return nil
	})
}

// pause marks the mailbox paused after its server refused the login and records
// mailbox.sync_paused, once: only the update that moves it to paused records the event, so
// concurrent or repeated refusals make one. No run is queued for a paused mailbox until the
// operator sets a new password (which sets it active).
func (m *Module) pause(ctx context.Context, mb *ent.Mailbox, cause error) error {
	return m.companyTx(ctx, mb.CompanyID, func(ctx context.Context) error {
		n, err := tenancy.Client(ctx).Mailbox.Update().Where(mailbox.ID(mb.ID), mailbox.SyncStateNEQ(mailbox.SyncStatePaused)).
			SetSyncState(mailbox.SyncStatePaused).SetSyncError(capRunes(cause.Error(), maxError)).Save(ctx)
		if err != nil {
			return fmt.Errorf("pause mailbox %s: %w", mb.ID, err)
		}
		if n == 0 {
			return nil
		}
		return m.d.Events.Record(ctx, "mailbox.sync_paused", mailboxEvent(mb))
	})
}

// MailboxEvent is the data of mailbox.sync_paused: the mailbox as GET /mailboxes shows it.
type MailboxEvent struct {
	ID     uuid.UUID `json:"id"`
	Email  string    `json:"email"`
	Label  string    `json:"label"`
	Shared bool      `json:"shared"`
	about  events.About
}

// EventAbout: a shared mailbox's event reaches the whole company, a personal one its owner (and
// who sees the owner's records).
func (v MailboxEvent) EventAbout() events.About { return v.about }

func mailboxEvent(mb *ent.Mailbox) MailboxEvent {
	v := MailboxEvent{ID: mb.ID, Email: mb.Email, Label: mb.Label, Shared: mb.Shared}
	if !mb.Shared {
		v.about = events.About{UserScoped: true, OwnerID: mb.OwnerID}
	}
	return v
}
