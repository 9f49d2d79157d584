package mailserver_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
)

const (
	broker   = "makler@broker.example"
	customer = "Kunde@Customer.example"
	pw       = "pw-1"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func startServer(t *testing.T, o mailserver.Options) (*mailserver.Server, mail.Config) {
	t.Helper()
	s, err := mailserver.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	for _, u := range []string{broker, customer} {
		if err := s.AddUser(u, pw); err != nil {
			t.Fatal(err)
		}
	}
	cfg := mail.Config{Timeout: 10 * time.Second}
	if s.RootCAs() != nil {
		cfg.TLS = &tls.Config{RootCAs: s.RootCAs()}
	}
	return s, cfg
}

// TestReplyFlow is the acceptance path of issue 21 at the protocol level: the broker sends, the
// customer reads the mail over IMAP, replies over SMTP, and the reply, threaded by In-Reply-To,
// is in the broker's INBOX. It would catch a server that records but does not deliver to local
// users, or delivers to the wrong account (addresses compare case-insensitively).
func TestReplyFlow(t *testing.T) {
	s, cfg := startServer(t, mailserver.Options{TLS: true})
	if !strings.HasPrefix(s.SMTPURL(), "smtp://127.0.0.1:") || !strings.HasPrefix(s.IMAPURL(), "imap://127.0.0.1:") {
		t.Fatalf("urls %s %s", s.SMTPURL(), s.IMAPURL())
	}
	out, err := mail.Compose(mail.Message{From: mail.Address{Email: broker, Name: "Makler"}, To: []mail.Address{{Email: "kunde@customer.example"}}, Subject: "Ihr Vertrag", Text: "Anbei."})
	if err != nil {
		t.Fatal(err)
	}
	if err := mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL(), Username: broker, Password: pw}, broker, []string{"kunde@customer.example"}, out); err != nil {
		t.Fatal(err)
	}
	sent := mail.Parse(out)

	// The customer reads it.
	c, err := mail.DialIMAP(ctx(t), cfg, mail.Server{URL: s.IMAPURL(), Username: "kunde@customer.example", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Select("INBOX"); err != nil {
		t.Fatal(err)
	}
	got, err := c.FetchAfter(0, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("customer INBOX: %v %d", err, len(got))
	}
	in := mail.Parse(got[0].Raw)
	if in.MessageID != sent.MessageID {
		t.Fatalf("customer got %q", in.MessageID)
	}

	// The customer replies.
	reply, err := mail.Compose(mail.Message{From: mail.Address{Email: "kunde@customer.example"}, To: []mail.Address{in.From},
		Subject: "Re: " + in.Subject, Text: "Danke!", InReplyTo: in.MessageID, References: []string{in.MessageID}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL(), Username: "kunde@customer.example", Password: pw}, "kunde@customer.example", []string{broker}, reply); err != nil {
		t.Fatal(err)
	}
	if env, err := s.WaitReceived(ctx(t), 2); err != nil || len(env) != 2 {
		t.Fatalf("received: %v %d", err, len(env))
	}

	b, err := mail.DialIMAP(ctx(t), cfg, mail.Server{URL: s.IMAPURL(), Username: broker, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Select("INBOX"); err != nil {
		t.Fatal(err)
	}
	got, err = b.FetchAfter(0, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("broker INBOX: %v %d", err, len(got))
	}
	if r := mail.Parse(got[0].Raw); r.InReplyTo != sent.MessageID || r.Text != "Danke!" {
		t.Fatalf("reply %+v", r)
	}
}

// TestRelayAndFaults: unauthenticated submissions are accepted and recorded (also for
// non-local recipients, delivered nowhere); FailNext fails exactly one DATA; a wrong password is
// refused with 535.
func TestRelayAndFaults(t *testing.T) {
	s, cfg := startServer(t, mailserver.Options{})
	raw := []byte("From: x@elsewhere.example\r\nTo: y@elsewhere.example\r\nSubject: t\r\n\r\nhi\r\n")
	anon := mail.Server{URL: s.SMTPURL()}
	if err := mail.Send(ctx(t), cfg, anon, "x@elsewhere.example", []string{"y@elsewhere.example"}, raw); err != nil {
		t.Fatal(err)
	}
	env := s.Received()
	if len(env) != 1 || env[0].From != "x@elsewhere.example" || env[0].To[0] != "y@elsewhere.example" || !strings.Contains(string(env[0].Data), "hi") {
		t.Fatalf("received %+v", env)
	}
	env[0].Data[0] = 'X' // a copy: the server's record stays
	if s.Received()[0].Data[0] != 'F' {
		t.Fatal("Received returns the server's own slice")
	}

	s.FailNext(421, "busy")
	var se *mail.SMTPError
	if err := mail.Send(ctx(t), cfg, anon, "x@elsewhere.example", []string{broker}, raw); !errors.As(err, &se) || se.Code != 421 || !se.Temporary() {
		t.Fatalf("FailNext 421: %v", err)
	}
	if err := mail.Send(ctx(t), cfg, anon, "x@elsewhere.example", []string{broker}, raw); err != nil {
		t.Fatalf("after one failure: %v", err)
	}
	if n := len(s.Received()); n != 2 {
		t.Fatalf("received %d", n)
	}

	err := mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL(), Username: broker, Password: "falsch"}, broker, []string{customer}, raw)
	if !errors.Is(err, mail.ErrAuth) {
		t.Fatalf("wrong password: %v", err)
	}
	err = mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL(), Username: "niemand@broker.example", Password: pw}, broker, []string{customer}, raw)
	if !errors.Is(err, mail.ErrAuth) {
		t.Fatalf("unknown user: %v", err)
	}
}

// TestWaitReceived returns as soon as enough messages arrived and gives up with ctx.
func TestWaitReceived(t *testing.T) {
	s, cfg := startServer(t, mailserver.Options{})
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.WaitReceived(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("empty server: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.WaitReceived(ctx(t), 2)
		done <- err
	}()
	raw := []byte("Subject: x\r\n\r\ny\r\n")
	for i := 0; i < 2; i++ {
		if err := mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL()}, broker, []string{customer}, raw); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitReceived did not return")
	}
}

// TestAccounts: the account operations refuse what they cannot do.
func TestAccounts(t *testing.T) {
	s, cfg := startServer(t, mailserver.Options{})
	if err := s.AddUser(broker, "x"); err == nil {
		t.Error("duplicate user")
	}
	if err := s.AddUser("no-address", "x"); err == nil {
		t.Error("user without @")
	}
	if err := s.SetPassword("niemand@x.example", "x"); err == nil {
		t.Error("SetPassword of an unknown user")
	}
	if err := s.Deliver("niemand@x.example", []byte("x")); err == nil {
		t.Error("Deliver to an unknown user")
	}
	// Deliver takes anything, malformed MIME included, and IMAP serves it byte for byte.
	junk := []byte("Content-Type: multipart/mixed; boundary=\"\r\n\r\n\x00\xff garbage")
	if err := s.Deliver(customer, junk); err != nil {
		t.Fatal(err)
	}
	c, err := mail.DialIMAP(ctx(t), cfg, mail.Server{URL: s.IMAPURL(), Username: customer, Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Select("INBOX"); err != nil {
		t.Fatal(err)
	}
	got, err := c.FetchAfter(0, 10)
	if err != nil || len(got) != 1 || string(got[0].Raw) != string(junk) {
		t.Fatalf("fetch: %v %+v", err, got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL()}, broker, []string{customer}, junk); err == nil {
		t.Fatal("send after Close")
	}
}
