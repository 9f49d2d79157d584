// Package emailsend tests the send path of the e-mail area: POST /emails, the send worker
// against a real SMTP and IMAP server on loopback sockets (app/platform/mailserver), points,
// open and click tracking and the unsubscribe link.
package emailsend

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/email"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

var (
	worldOnce sync.Once
	world     *apitest.Env
	smtpd     *mailserver.Server // the shared mail server, with STARTTLS
)

// setup returns the package's server, working jobs like a serve process, and the shared mail
// server (TLS: the workers trust its certificate through app.WithMail).
func setup(t testing.TB) (*apitest.Env, *mailserver.Server) {
	t.Helper()
	worldOnce.Do(func() {
		var err error
		if smtpd, err = mailserver.Start(mailserver.Options{TLS: true}); err != nil {
			t.Fatalf("mail server: %v", err)
		}
		world = apitest.New(keep{t}, app.WithMail(mail.Config{TLS: &tls.Config{RootCAs: smtpd.RootCAs()}, Timeout: 5 * time.Second}))
		if err := world.Server.StartJobs(context.Background()); err != nil {
			t.Fatalf("start jobs: %v", err)
		}
		apitest.BeforeDrop(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_ = world.Server.StopJobs(ctx)
			world.Server.Close()
			_ = smtpd.Close()
		})
	})
	if world == nil {
		t.Fatal("no test server")
	}
	return world, smtpd
}

// keep is t without cleanups: the package's server outlives the test that builds it.
type keep struct{ testing.TB }

func (keep) Cleanup(func()) {}

var seq atomic.Int64

// sender is a company licensing emails (and marketing) with a shared mailbox on a mail server,
// and points.
type sender struct {
	co       *apitest.Company
	mailbox  operator.Mailbox
	address  string
	password string
	srv      *mailserver.Server
}

// newSender makes a company with features, a shared mailbox on srv (nil: the shared one) and
// points (0: none granted).
func newSender(t *testing.T, env *apitest.Env, srv *mailserver.Server, points int64, features ...string) *sender {
	t.Helper()
	if srv == nil {
		_, srv = setup(t)
	}
	if features == nil {
		features = []string{"emails", "marketing"}
	}
	s := &sender{co: env.NewCompany(t, features...), srv: srv, password: "pw-" + uuid.NewString()}
	s.address = fmt.Sprintf("makler%d@broker.test", seq.Add(1))
	if err := srv.AddUser(s.address, s.password); err != nil {
		t.Fatalf("mail user: %v", err)
	}
	mb, err := env.Ops.CreateMailbox(context.Background(), env.Config.DataKeys, operator.NewMailbox{CompanyID: s.co.ID,
		Email: s.address, Label: "Makler Büro", IMAPURL: srv.IMAPURL(), SMTPURL: srv.SMTPURL(), Username: s.address,
		Password: s.password, Shared: true})
	if err != nil {
		t.Fatalf("create mailbox: %v", err)
	}
	s.mailbox = mb
	if points > 0 {
		if _, err := env.Ops.GrantPoints(context.Background(), s.co.ID, points, "test"); err != nil {
			t.Fatalf("grant points: %v", err)
		}
	}
	return s
}

// balance is the company's points balance.
func (s *sender) balance(t *testing.T, env *apitest.Env) int64 {
	t.Helper()
	b, err := env.Ops.PointsBalance(context.Background(), s.co.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// body is an EmailSend from s's mailbox to one recipient, with extra fields.
func (s *sender) body(to string, extra map[string]any) map[string]any {
	b := map[string]any{"mailboxId": s.mailbox.ID, "to": []map[string]any{{"email": to, "name": "Erika Muster"}},
		"subject": "Ihr Angebot", "text": "Guten Tag, anbei Ihr Angebot."}
	for k, v := range extra {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

type address struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

type attachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"contentType"`
	SizeBytes   int64  `json:"sizeBytes"`
}

type emailView struct {
	ID          string       `json:"id"`
	ThreadID    string       `json:"threadId"`
	MailboxID   string       `json:"mailboxId"`
	Direction   string       `json:"direction"`
	Status      string       `json:"status"`
	MessageID   string       `json:"messageId"`
	InReplyTo   *string      `json:"inReplyTo"`
	From        address      `json:"from"`
	To          []address    `json:"to"`
	Subject     string       `json:"subject"`
	Text        *string      `json:"text"`
	HTML        *string      `json:"html"`
	Error       *string      `json:"error"`
	Marketing   bool         `json:"marketing"`
	Tracking    bool         `json:"tracking"`
	ContactIDs  []string     `json:"contactIds"`
	Attachments []attachment `json:"attachments"`
}

// send POSTs body as s's company and fails unless the answer is 201.
func (s *sender) send(t *testing.T, env *apitest.Env, body any) emailView {
	t.Helper()
	return apitest.Create[emailView](t, env, s.co.Secret, "/emails", body)
}

// waitStatus waits until the e-mail id has status (read below the API, company-level) and
// returns the row.
func waitStatus(t *testing.T, env *apitest.Env, company uuid.UUID, id string, status string) *ent.Email {
	t.Helper()
	// River retries at attempt⁴ seconds: a test whose send failed twice waits for the third
	// attempt, 16 s after the second.
	deadline := time.Now().Add(60 * time.Second)
	var e *ent.Email
	for {
		env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
			var err error
			e, err = db.Email.Get(ctx, uuid.MustParse(id))
			return err
		})
		if string(e.Status) == status {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("email %s: status %s (error %q), want %s", id, e.Status, e.Error, status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setStatus moves an e-mail on below the API (as delivery would).
func setStatus(t *testing.T, env *apitest.Env, company uuid.UUID, id string, status email.Status) {
	t.Helper()
	env.InCompany(t, company, func(ctx context.Context, db *ent.Client) error {
		return db.Email.UpdateOneID(uuid.MustParse(id)).SetStatus(status).Exec(ctx)
	})
}

// received waits for the message with Message-ID id on srv and returns its envelope.
func received(t *testing.T, srv *mailserver.Server, messageID string) mailserver.Envelope {
	t.Helper()
	// River retries at attempt⁴ seconds: a test whose send failed twice waits for the third
	// attempt, 16 s after the second.
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, e := range srv.Received() {
			if p := mail.Parse(e.Data); p.MessageID == messageID {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mail server never received %s", messageID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// events returns the company's events of typ.
func events(t *testing.T, env *apitest.Env, key, typ string) []event {
	t.Helper()
	r := env.Do(t, apitest.Request{Path: "/events?types=" + typ, Key: key})
	if r.Status != 200 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	var p apitest.Page[event]
	r.Decode(t, &p)
	return p.Data
}

// eventsAbout are the events of typ whose data is the e-mail id.
func eventsAbout(t *testing.T, env *apitest.Env, key, typ, id string) []emailView {
	t.Helper()
	var out []emailView
	for _, e := range events(t, env, key, typ) {
		var v emailView
		if err := json.Unmarshal(e.Data, &v); err != nil {
			t.Fatal(err)
		}
		if v.ID == id {
			out = append(out, v)
		}
	}
	return out
}

// newContact creates a contact through the API.
func newContact(t *testing.T, env *apitest.Env, key, emailAddr string) string {
	t.Helper()
	c := apitest.Create[struct {
		ID string `json:"id"`
	}](t, env, key, "/contacts", map[string]any{"type": "private", "firstName": "Erika", "lastName": "Muster", "email": emailAddr})
	return c.ID
}

// plainServer is a mail server of one test, without TLS (loopback: the client may go
// plaintext), for fault injection that must not reach other tests' sends.
func plainServer(t *testing.T) *mailserver.Server {
	t.Helper()
	return testsvc.MailServer(t, mailserver.Options{})
}

// do sends a request to a public route (server root).
func do(t *testing.T, env *apitest.Env, method, path string, body any, header map[string]string) *apitest.Response {
	t.Helper()
	return env.Do(t, apitest.Request{Method: method, Path: "//" + path, Body: body, Header: header})
}

// linkIn returns the first URL in s starting with prefix.
func linkIn(t *testing.T, s, prefix string) string {
	t.Helper()
	i := strings.Index(s, prefix)
	if i < 0 {
		t.Fatalf("no link %s… in %q", prefix, s)
	}
	end := strings.IndexAny(s[i:], "\"'> \r\n")
	if end < 0 {
		end = len(s) - i
	}
	return s[i : i+end]
}
