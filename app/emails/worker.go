package emails

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// SendArgs is the job that delivers one queued e-mail: ids only, never content.
type SendArgs struct {
	CompanyID uuid.UUID `json:"companyId"`
	EmailID   uuid.UUID `json:"emailId"`
}

// Kind names the job.
func (SendArgs) Kind() string { return "email_send" }

// sendAttempts is how often a temporary failure (4xx, a server that does not answer) is
// tried: river's backoff (attempt⁴ seconds) spreads 10 attempts over about four and a half
// hours, past the usual greylisting and short outages; the last failure marks the e-mail
// failed and refunds its points.
const sendAttempts = 10

// InsertOpts: one job per e-mail (unique by its arguments).
func (SendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: jobs.QueueMail, MaxAttempts: sendAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// sendSafetyDelay is when a send's job runs if nothing makes it run earlier. The job is
// inserted scheduled before the request commits, and made available at once after the commit
// (enqueue): a process that dies between the commit and that step leaves a job that still runs
// then. A lost job is not a lost send.
const sendSafetyDelay = 2 * time.Minute

// enqueue inserts the delivery job of the e-mail id, scheduled sendSafetyDelay ahead, and
// makes it available as soon as the transaction of ctx commits (removed again when it rolls
// back). The job pool is not the request's: the request's role cannot reach the queue.
func (m *Module) enqueue(ctx context.Context, company, id uuid.UUID) error {
	inRequest, err := jobs.InsertAtCommit(ctx, m.queue, SendArgs{CompanyID: company, EmailID: id},
		SendArgs{}.InsertOpts(), m.d.Now().Add(sendSafetyDelay))
	if err == nil && !inRequest {
		// Outside a request transaction (a worker's send): the job runs when scheduled.
		zerolog.Ctx(ctx).Debug().Str("email_id", id.String()).Msg("send outside a request transaction: delivery when scheduled")
	}
	return err
}

// sendWorker delivers a queued e-mail over its mailbox's SMTP server.
type sendWorker struct {
	river.WorkerDefaults[SendArgs]
	m *Module
}

// Timeout bounds one attempt: the SMTP conversation (its own timeouts are shorter) and the
// append to the Sent folder; river's rescue (JOBS_RESCUE_AFTER) is longer, so a running send
// is never taken over by another process.
func (w *sendWorker) Timeout(*river.Job[SendArgs]) time.Duration { return jobs.JobTimeout }

// Work sends the e-mail unless it was sent or failed already (a repeated job changes nothing),
// or it is marketing mail whose recipient opted out meanwhile (failed, refunded). Success: status sent, sent_at, email.sent, then a copy in the mailbox's Sent folder. A
// permanent refusal (5xx, a refused login, a configuration that cannot work): status failed
// with the server's answer, the points refunded, email.failed, no retry. Anything else is
// returned for river to retry, and fails the e-mail the same way on the last attempt.
func (w *sendWorker) Work(ctx context.Context, job *river.Job[SendArgs]) error {
	m := w.m
	var (
		e        *ent.Email
		mb       *ent.Mailbox
		optedOut []string
	)
	err := m.companyTx(ctx, job.Args.CompanyID, func(ctx context.Context) error {
		db := tenancy.Client(ctx)
		var err error
		if e, err = db.Email.Get(ctx, job.Args.EmailID); err != nil {
			return err
		}
		if mb, err = db.Mailbox.Query().Where(mailbox.ID(e.MailboxID)).Only(ctx); err != nil {
			return err
		}
		if e.Marketing && e.Status == email.StatusQueued {
			// The address may have opted out since the message was queued (a retry hours later).
			optedOut, err = m.svc.OptedOut(ctx, recipients(Outgoing{To: e.To, Cc: e.Cc, Bcc: e.Bcc}))
		}
		return err
	})
	if ent.IsNotFound(err) {
		return nil // its request rolled back, or the message (or mailbox) is gone
	}
	if err != nil {
		return err
	}
	if e.Status != email.StatusQueued {
		return nil
	}
	if len(optedOut) > 0 {
		return m.markFailed(ctx, e, "not sent: the recipient opted out of marketing e-mail after it was queued")
	}
	log := m.d.Log.With().Str("email_id", e.ID.String()).Str("company_id", e.CompanyID.String()).Logger()
	sendErr := m.deliver(ctx, e, mb)
	if sendErr == nil {
		if err := m.markSent(ctx, e); err != nil {
			// The server has the message but the row still says queued: the retry sends it
			// again. A duplicate (rare: the database failed in between) over a lost send.
			return err
		}
		m.appendSent(ctx, e, mb, log)
		return nil
	}
	answer, permanent := classify(sendErr)
	if !permanent && job.Attempt < job.MaxAttempts {
		log.Warn().Err(sendErr).Int("attempt", job.Attempt).Msg("send email: temporary failure, retried")
		return sendErr
	}
	if !permanent {
		answer = fmt.Sprintf("%s (gave up after %d attempts)", answer, job.Attempt)
	}
	log.Warn().Err(sendErr).Msg("send email: failed")
	return m.markFailed(ctx, e, answer)
}

// deliver reads what the send needs and submits the raw message to the mailbox's SMTP server;
// the envelope holds to, cc and bcc.
func (m *Module) deliver(ctx context.Context, e *ent.Email, mb *ent.Mailbox) error {
	password, err := OpenPassword(m.d.Keys, mb)
	if err != nil {
		return err
	}
	raw, err := m.d.Bucket.ReadAll(ctx, e.RawKey)
	if err != nil {
		return fmt.Errorf("read raw message %s: %w", e.RawKey, err)
	}
	rcpts := recipients(Outgoing{To: e.To, Cc: e.Cc, Bcc: e.Bcc})
	return mail.Send(ctx, m.d.Mail, mail.Server{URL: mb.SMTPURL, Username: mb.Username, Password: password}, mb.Email, rcpts, raw)
}

// classify says whether a send error is final, with the answer to store: the server's reply
// (code, enhanced code, text) when it gave one.
func classify(err error) (answer string, permanent bool) {
	var se *mail.SMTPError
	if errors.As(err, &se) {
		answer = fmt.Sprintf("%d %s", se.Code, se.Message)
		if se.Enhanced != "" {
			answer = fmt.Sprintf("%d %s %s", se.Code, se.Enhanced, se.Message)
		}
	} else {
		answer = err.Error()
	}
	switch {
	case errors.Is(err, mail.ErrAuth):
		return "the SMTP server refused the mailbox's login: " + answer, true
	case errors.Is(err, mail.ErrInsecure):
		return answer, true
	case se != nil:
		return answer, !se.Temporary()
	}
	return answer, false
}

// markSent records the server's acceptance: status sent, sent_at, email.sent.
func (m *Module) markSent(ctx context.Context, e *ent.Email) error {
	return m.companyTx(ctx, e.CompanyID, func(ctx context.Context) error {
		u, err := tenancy.Client(ctx).Email.UpdateOne(e).Where(email.StatusEQ(email.StatusQueued)).
			SetStatus(email.StatusSent).SetSentAt(m.d.Now()).Save(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mark email %s sent: %w", e.ID, err)
		}
		return m.svc.recordEmail(ctx, "email.sent", u)
	})
}

// markFailed records a final failure: status failed with the server's answer, the points given
// back, email.failed.
func (m *Module) markFailed(ctx context.Context, e *ent.Email, answer string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return m.companyTx(ctx, e.CompanyID, func(ctx context.Context) error {
		u, err := tenancy.Client(ctx).Email.UpdateOne(e).Where(email.StatusEQ(email.StatusQueued)).
			SetStatus(email.StatusFailed).SetError(answer).Save(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mark email %s failed: %w", e.ID, err)
		}
		if err := refundPoints(ctx, int64(u.Points), u.ID); err != nil {
			return err
		}
		return m.svc.recordEmail(ctx, "email.failed", u)
	})
}

// appendSent stores the sent message in the mailbox's Sent folder over IMAP (\Seen), so the
// broker's own mail client shows it; the folder found is kept in mailboxes.sent_folder. A
// failure is logged only: the mail went out.
func (m *Module) appendSent(ctx context.Context, e *ent.Email, mb *ent.Mailbox, log zerolog.Logger) {
	err := func() error {
		password, err := OpenPassword(m.d.Keys, mb)
		if err != nil {
			return err
		}
		raw, err := m.d.Bucket.ReadAll(ctx, e.RawKey)
		if err != nil {
			return err
		}
		c, err := mail.DialIMAP(ctx, m.d.Mail, mail.Server{URL: mb.ImapURL, Username: mb.Username, Password: password})
		if err != nil {
			return err
		}
		defer c.Close()
		folder := mb.SentFolder
		if folder == "" {
			if folder, err = c.SentFolder(); err != nil {
				return err
			}
			err = m.companyTx(ctx, mb.CompanyID, func(ctx context.Context) error {
				return tenancy.Client(ctx).Mailbox.Update().Where(mailbox.ID(mb.ID)).SetSentFolder(folder).Exec(ctx)
			})
			if err != nil {
				log.Warn().Err(err).Msg("send email: store the Sent folder's name")
			}
		}
		return c.Append(folder, raw, true)
	}()
	if err != nil {
		log.Warn().Err(err).Msg("send email: append to the Sent folder (the mail went out)")
	}
}
