// Package mailsync tests the IMAP sync of company mailboxes against a real IMAP server on a
// socket (app/platform/mailserver): what a sync stores and how it threads, links and reports,
// that it resumes after an interruption without duplicates, survives hostile messages, and
// pauses a mailbox whose login is refused without a retry storm.
package mailsync

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/ent/emailthread"
	"github.com/brokerdesk/brokerdesk/ent/event"
	"github.com/brokerdesk/brokerdesk/ent/mailbox"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

const password = "postfach-geheim-1"

var (
	modOnce sync.Once
	mod     *emails.Module
	modErr  error
)

// module is an e-mail module on the package database as the server builds it (jobs role pool,
// the server's blob storage and data keys), whose SyncMailbox the tests call directly: one
// whole sync, deterministic, without waiting for a period.
func module(t testing.TB, env *apitest.Env) *emails.Module {
	t.Helper()
	modOnce.Do(func() {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, env.Config.JobsDatabaseURL)
		if err != nil {
			modErr = err
			return
		}
		bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
		if err != nil {
			modErr = err
			return
		}
		apitest.BeforeDrop(func() { _ = bucket.Close(); pool.Close() })
		db := ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(pool))))
		mod = emails.New(emails.Deps{Pool: pool, DB: db, Bucket: bucket, Events: events.NewService(),
			Keys: env.Config.DataKeys, Mail: mail.Config{Timeout: 10 * time.Second}, Now: time.Now, Log: zerolog.Nop()})
	})
	if modErr != nil {
		t.Fatalf("e-mail module: %v", modErr)
	}
	return mod
}

// world is one test's company with a mailbox on a mail server of its own.
type world struct {
	env  *apitest.Env
	co   *apitest.Company
	srv  *mailserver.Server
	box  operator.Mailbox
	addr string // the mailbox's address
}

var seq int64
var seqMu sync.Mutex

func next() int64 {
	seqMu.Lock()
	defer seqMu.Unlock()
	seq++
	return seq
}

// newWorld makes a company (leads, emails) with a shared mailbox on a fresh mail server.
func newWorld(t *testing.T, o mailserver.Options) *world {
	t.Helper()
	env := apitest.New(t)
	w := &world{env: env, co: env.NewCompany(t, "leads", "emails"), srv: testsvc.MailServer(t, o),
		addr: fmt.Sprintf("makler%d@firma.test", next())}
	if err := w.srv.AddUser(w.addr, password); err != nil {
		t.Fatal(err)
	}
	var err error
	w.box, err = env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: w.co.ID,
		Email: w.addr, Label: "Büro", IMAPURL: w.srv.IMAPURL(), SMTPURL: w.srv.SMTPURL(), Username: w.addr,
		Password: password, Shared: true})
	if err != nil {
		t.Fatalf("create mailbox: %v", err)
	}
	return w
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// deliver puts raw into the mailbox's INBOX.
func (w *world) deliver(t *testing.T, raws ...[]byte) {
	t.Helper()
	for _, raw := range raws {
		if err := w.srv.Deliver(w.addr, raw); err != nil {
			t.Fatal(err)
		}
	}
}

// appendSent puts raw into the mailbox's Sent folder over IMAP, as a desktop client does.
func (w *world) appendSent(t *testing.T, raws ...[]byte) {
	t.Helper()
	c, err := mail.DialIMAP(ctxT(t), mail.Config{}, mail.Server{URL: w.srv.IMAPURL(), Username: w.addr, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, raw := range raws {
		if err := c.Append("Sent", raw, true); err != nil {
			t.Fatal(err)
		}
	}
}

// sync runs one whole sync and fails the test on an error.
func (w *world) sync(t *testing.T) emails.SyncReport {
	t.Helper()
	rep, err := module(t, w.env).SyncMailbox(ctxT(t), w.co.ID, w.box.ID, emails.SyncOptions{})
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return rep
}

// in runs f pinned to the company as the app role.
func (w *world) in(t *testing.T, f func(ctx context.Context, db *ent.Client) error) {
	t.Helper()
	w.env.InCompany(t, w.co.ID, f)
}

// emails are the mailbox's messages, in the order they were stored.
func (w *world) emails(t *testing.T) []*ent.Email {
	t.Helper()
	var out []*ent.Email
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		out, err = db.Email.Query().Where(email.MailboxID(w.box.ID)).Order(ent.Asc(email.FieldCreatedAt), ent.Asc(email.FieldFolder), ent.Asc(email.FieldImapUID)).All(ctx)
		return err
	})
	return out
}

// bySubject is the mailbox's message with subject.
func (w *world) bySubject(t *testing.T, subject string) *ent.Email {
	t.Helper()
	for _, e := range w.emails(t) {
		if e.Subject == subject {
			return e
		}
	}
	t.Fatalf("no message %q", subject)
	return nil
}

func (w *world) thread(t *testing.T, id uuid.UUID) *ent.EmailThread {
	t.Helper()
	var out *ent.EmailThread
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		out, err = db.EmailThread.Get(ctx, id)
		return err
	})
	return out
}

func (w *world) threads(t *testing.T) []*ent.EmailThread {
	t.Helper()
	var out []*ent.EmailThread
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		out, err = db.EmailThread.Query().Where(emailthread.MailboxID(w.box.ID)).All(ctx)
		return err
	})
	return out
}

func (w *world) mailbox(t *testing.T) *ent.Mailbox {
	t.Helper()
	var out *ent.Mailbox
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		out, err = db.Mailbox.Query().Where(mailbox.ID(w.box.ID)).Only(ctx)
		return err
	})
	return out
}

// events are the company's events of type typ.
func (w *world) events(t *testing.T, typ string) []*ent.Event {
	t.Helper()
	var out []*ent.Event
	w.in(t, func(ctx context.Context, db *ent.Client) error {
		var err error
		out, err = db.Event.Query().Where(event.Type(typ)).All(ctx)
		return err
	})
	return out
}

// msg is a message to build.
type msg struct {
	From, To, Cc, Subject, ID, InReplyTo, References string
	Date                                             time.Time
	Headers                                          []string // more "Name: value" lines
	Body                                             string   // after the header block (text/plain unless Headers say)
}

// raw is the message in RFC 5322 form (CRLF).
func (m msg) raw() []byte {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	line("From", m.From)
	line("To", m.To)
	line("Cc", m.Cc)
	line("Subject", m.Subject)
	if m.ID != "" {
		line("Message-ID", "<"+m.ID+">")
	}
	if m.InReplyTo != "" {
		line("In-Reply-To", "<"+m.InReplyTo+">")
	}
	line("References", m.References)
	d := m.Date
	if d.IsZero() {
		d = time.Now()
	}
	line("Date", d.Format(time.RFC1123Z))
	line("MIME-Version", "1.0")
	hasType := false
	for _, h := range m.Headers {
		hasType = hasType || strings.HasPrefix(strings.ToLower(h), "content-type:")
		b.WriteString(h + "\r\n")
	}
	if !hasType {
		b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(m.Body, "\n", "\r\n"))
	return []byte(b.String())
}

// customerMail is an inbound message from a customer to the world's mailbox.
func (w *world) customerMail(subject, id string) msg {
	return msg{From: "Kunde <kunde@privat.test>", To: w.addr, Subject: subject, ID: id, Body: "Hallo,\nbitte um Rückruf.\n"}
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("m%d-%s@privat.test", i, uuid.NewString()[:8])
	}
	return out
}
