// Package signingtest is the world of the signing tests (test/signing, test/browser): the test
// server working its jobs, listening on a real socket (the signing page is visited by a real
// HTTP client or browser), a mail server the links and codes arrive at, and fixtures of a
// brokerage that sends a document for signature.
package signingtest

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
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
	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// World is a test package's server, its address and its mail server.
type World struct {
	Env  *apitest.Env
	Mail *mailserver.Server
	// Base is the server's address on a real socket (http://127.0.0.1:PORT): links in the mails
	// name PUBLIC_URL, and Visit rewrites them to Base.
	Base string
}

var (
	once  sync.Once
	world *World
	err   error
)

// Setup returns the package's world, built on first use: a server served on 127.0.0.1 and
// working jobs like a serve process (the mails go out).
// apitest.Main must run the package (TestMain).
func Setup(t testing.TB) *World {
	t.Helper()
	once.Do(func() { world, err = build(t) })
	if err != nil {
		t.Fatal(err)
	}
	return world
}

func build(t testing.TB) (*World, error) {
	// Plaintext on loopback: any server of the test binary working jobs on the package database
	// (test/browser serves another) may deliver this one's mails; none needs its certificate.
	srv, err := mailserver.Start(mailserver.Options{})
	if err != nil {
		return nil, fmt.Errorf("mail server: %w", err)
	}
	env := apitest.New(keep{t}, app.WithMail(mail.Config{Timeout: 5 * time.Second}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// ServeListener also works the jobs, as a serve process does, and stops them when ctx ends.
	go func() { done <- env.Server.ServeListener(ctx, ln, 5*time.Second) }()
	apitest.BeforeDrop(func() {
		cancel()
		<-done
		env.Server.Close()
		_ = srv.Close()
	})
	w := &World{Env: env, Mail: srv, Base: "http://" + ln.Addr().String()}
	for i := 0; ; i++ {
		resp, err := http.Get(w.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
			return w, nil
		}
		if i == 100 {
			return nil, fmt.Errorf("server at %s does not answer: %w", w.Base, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keep is t without cleanups: the package's server outlives the test that builds it.
type keep struct{ testing.TB }

func (keep) Cleanup(func()) {}

var seq atomic.Int64

// Broker is a company licensing signatures and e-mail, with a shared mailbox on the world's
// mail server.
type Broker struct {
	Co      *apitest.Company
	Mailbox operator.Mailbox
	Address string
}

// NewBroker makes a Broker.
func (w *World) NewBroker(t testing.TB) *Broker {
	t.Helper()
	return w.NewBrokerWith(t, "digital_signature", "emails", "advice")
}

// NewBrokerWith makes a Broker licensing features (the customer portal's tests add
// customer_portal).
func (w *World) NewBrokerWith(t testing.TB, features ...string) *Broker {
	t.Helper()
	b := &Broker{Co: w.Env.NewCompany(t, features...)}
	b.Address = fmt.Sprintf("makler%d-%d@broker.test", seq.Add(1), time.Now().UnixNano()%1e6)
	password := "pw-" + uuid.NewString()
	if err := w.Mail.AddUser(b.Address, password); err != nil {
		t.Fatalf("mail user: %v", err)
	}
	mb, err := w.Env.Ops.CreateMailbox(context.Background(), w.Env.Config.DataKeys, operator.NewMailbox{CompanyID: b.Co.ID,
		Email: b.Address, Label: "Makler Büro", IMAPURL: w.Mail.IMAPURL(), SMTPURL: w.Mail.SMTPURL(), Username: b.Address,
		Password: password, Shared: true})
	if err != nil {
		t.Fatalf("create mailbox: %v", err)
	}
	b.Mailbox = mb
	return b
}

// Address is a fresh recipient address (every test its own, so mails are told apart).
func Address(name string) string {
	return fmt.Sprintf("%s-%d-%d@kunde.test", name, seq.Add(1), time.Now().UnixNano()%1e6)
}

// NewContact creates a private contact with e-mail and returns its id.
func (w *World) NewContact(t testing.TB, b *Broker, first, last, email string) string {
	t.Helper()
	c := apitest.Create[struct {
		ID string `json:"id"`
	}](t, w.Env, b.Co.Secret, "/contacts", map[string]any{"type": "private", "firstName": first, "lastName": last, "email": email})
	return c.ID
}

// UploadPDF renders body (app/platform/pdf markup) and uploads it as a document of contact
// (type broker_agreement); it returns the document's id.
func (w *World) UploadPDF(t testing.TB, b *Broker, contact, filename, body string) string {
	t.Helper()
	r, err := pdf.Render(body, nil, pdf.Meta{Title: filename, CreatedAt: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatalf("render %s: %v", filename, err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("type", "broker_agreement")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := mw.CreatePart(h)
	_, _ = fw.Write(r.PDF)
	_ = mw.Close()
	resp := w.Env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: b.Co.Secret,
		Body: buf.Bytes(), Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if resp.Status != 201 {
		t.Fatalf("upload: %d %s", resp.Status, resp.Body)
	}
	var d struct {
		ID string `json:"id"`
	}
	resp.Decode(t, &d)
	return d.ID
}

// Request is a SignatureRequest as the tests read it.
type Request struct {
	ID               string   `json:"id"`
	Status           string   `json:"status"`
	Title            string   `json:"title"`
	SignedDocumentID *string  `json:"signedDocumentId"`
	Signers          []Signer `json:"signers"`
}

// Signer is a signer of a Request.
type Signer struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Email    string  `json:"email"`
	Status   string  `json:"status"`
	ViewedAt *string `json:"viewedAt"`
	SignedAt *string `json:"signedAt"`
}

// CreateRequest POSTs /signature-requests with body (the broker's mailbox unless body names
// one) and fails unless it is 201.
func (w *World) CreateRequest(t testing.TB, b *Broker, body map[string]any) Request {
	t.Helper()
	if _, ok := body["mailboxId"]; !ok {
		body["mailboxId"] = b.Mailbox.ID
	}
	return apitest.Create[Request](t, w.Env, b.Co.Secret, "/signature-requests", body)
}

// GetRequest reads a request through the API.
func (w *World) GetRequest(t testing.TB, b *Broker, id string) Request {
	t.Helper()
	return apitest.Get[Request](t, w.Env, b.Co.Secret, "/signature-requests/"+id)
}

// Mails returns the mails the server received for to whose subject starts with subject.
func (w *World) Mails(to, subject string) []mail.Parsed {
	var out []mail.Parsed
	for _, e := range w.Mail.Received() {
		for _, rcpt := range e.To {
			if strings.EqualFold(rcpt, to) {
				if p := mail.Parse(e.Data); strings.HasPrefix(p.Subject, subject) {
					out = append(out, *p)
				}
				break
			}
		}
	}
	return out
}

// WaitMails waits until at least n mails to `to` with subject prefix arrived and returns them.
func (w *World) WaitMails(t testing.TB, to, subject string, n int) []mail.Parsed {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := w.Mails(to, subject); len(m) >= n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mails %q… to %s, want %d", len(w.Mails(to, subject)), subject, to, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Subjects of the signing mails.
const (
	InvitationSubject = "Bitte unterschreiben"
	CodeSubject       = "Ihr Bestätigungscode"
)

var (
	linkRE = regexp.MustCompile(`https?://[^\s"'<>]+/sign/[A-Za-z0-9_-]+`)
	codeRE = regexp.MustCompile(`Bestätigungscode: (\d{6})`)
)

// LinkPath waits for the invitation to `to` and returns its link's path (/sign/TOKEN).
func (w *World) LinkPath(t testing.TB, to string) string {
	t.Helper()
	m := w.WaitMails(t, to, InvitationSubject, 1)
	link := linkRE.FindString(m[0].Text)
	if link == "" {
		t.Fatalf("no signing link in the invitation: %q", m[0].Text)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// Code waits for the n-th code mail to `to` (1-based) and returns its code.
func (w *World) Code(t testing.TB, to string, n int) string {
	t.Helper()
	m := w.WaitMails(t, to, CodeSubject, n)
	c := codeRE.FindStringSubmatch(m[n-1].Text)
	if c == nil {
		t.Fatalf("no code in the code mail: %q", m[n-1].Text)
	}
	return c[1]
}

var csrfRE = regexp.MustCompile(`<form method="post" action="([^"]+)"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)">`)

// CSRF returns the csrf fields of a page's forms by their action.
func CSRF(page string) map[string]string {
	out := map[string]string{}
	for _, m := range csrfRE.FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	return out
}
