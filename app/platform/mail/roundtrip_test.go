package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

const (
	broker   = "makler@broker.example"
	customer = "kunde@customer.example"
	password = "geheim-123"
)

// start runs a mail server with the broker's and the customer's accounts.
func start(t *testing.T, o mailserver.Options) (*mailserver.Server, mail.Config) {
	t.Helper()
	s := testsvc.MailServer(t, o)
	for _, u := range []string{broker, customer} {
		if err := s.AddUser(u, password); err != nil {
			t.Fatal(err)
		}
	}
	cfg := mail.Config{Timeout: 10 * time.Second}
	if roots := s.RootCAs(); roots != nil {
		cfg.TLS = &tls.Config{RootCAs: roots}
	}
	return s, cfg
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestRoundTrip sends a composed message over SMTP and parses what the server received: it would
// catch lost umlauts (RFC 2047), a mangled RFC 2231 filename, lost threading headers, a Bcc
// leaking into the data or missing from the envelope.
func TestRoundTrip(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "starttls"}[withTLS], func(t *testing.T) {
			s, cfg := start(t, mailserver.Options{TLS: withTLS})
			pdf := bytes.Repeat([]byte("%PDF-1.4 \x00\x01\x02\xff"), 200)
			m := mail.Message{
				From:       mail.Address{Email: broker, Name: "Jürgen Müller"},
				To:         []mail.Address{{Email: customer, Name: "Änne Öztürk, GmbH"}},
				Cc:         []mail.Address{{Email: "cc@customer.example"}},
				Bcc:        []mail.Address{{Email: "blind@broker.example", Name: "Geheim"}},
				Subject:    "Kündigung Ihrer Kfz-Versicherung – Größe ändert sich",
				Text:       "Sehr geehrte Frau Öztürk,\nanbei die Unterlagen.\n",
				HTML:       "<p>Sehr geehrte Frau <b>Öztürk</b>,</p><p>anbei die Unterlagen.</p>",
				InReplyTo:  "orig-1@customer.example",
				References: []string{"orig-0@customer.example", "orig-1@customer.example"},
				Headers:    [][2]string{{"List-Unsubscribe", "<https://broker.example/u/1>"}, {"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"}},
				Attachments: []mail.Attachment{
					{Filename: "Kündigungsbestätigung Größe.pdf", ContentType: "application/pdf", Data: pdf},
					{Filename: "logo.png", ContentType: "image/png", ContentID: "logo@broker", Inline: true, Data: []byte("\x89PNG fake")},
				},
			}
			raw, err := mail.Compose(m)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte("blind@broker.example")) || bytes.Contains(raw, []byte("Bcc")) {
				t.Fatalf("Bcc written into the message:\n%s", raw)
			}
			rcpts := []string{customer, "cc@customer.example", "blind@broker.example"}
			if err := mail.Send(ctx(t), cfg, mail.Server{URL: s.SMTPURL(), Username: broker, Password: password}, broker, rcpts, raw); err != nil {
				t.Fatal(err)
			}
			got, err := s.WaitReceived(ctx(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			env := got[0]
			if env.From != broker || strings.Join(env.To, ",") != strings.Join(rcpts, ",") {
				t.Fatalf("envelope %q -> %q", env.From, env.To)
			}
			if bytes.Contains(env.Data, []byte("blind@broker.example")) {
				t.Fatal("Bcc in the transmitted data")
			}
			p := mail.Parse(env.Data)
			if len(p.Problems) > 0 {
				t.Fatalf("problems: %q", p.Problems)
			}
			if p.Subject != m.Subject {
				t.Errorf("subject %q", p.Subject)
			}
			if p.From != m.From {
				t.Errorf("from %+v", p.From)
			}
			if len(p.To) != 1 || p.To[0] != m.To[0] || len(p.Cc) != 1 || p.Cc[0].Email != "cc@customer.example" {
				t.Errorf("to %+v cc %+v", p.To, p.Cc)
			}
			if p.MessageID == "" || !strings.HasSuffix(p.MessageID, "@broker.example") {
				t.Errorf("message id %q", p.MessageID)
			}
			if p.InReplyTo != m.InReplyTo || strings.Join(p.References, " ") != strings.Join(m.References, " ") {
				t.Errorf("in-reply-to %q references %q", p.InReplyTo, p.References)
			}
			if p.Text != strings.TrimRight(m.Text, "\n") {
				t.Errorf("text %q", p.Text)
			}
			if !strings.Contains(p.HTML, "<b>Öztürk</b>") {
				t.Errorf("html %q", p.HTML)
			}
			if len(p.Attachments) != 2 {
				t.Fatalf("attachments %+v", p.Attachments)
			}
			byName := map[string]mail.Part{}
			for _, a := range p.Attachments {
				byName[a.Filename] = a
			}
			a, ok := byName["Kündigungsbestätigung Größe.pdf"]
			if !ok || !bytes.Equal(a.Data, pdf) || a.DeclaredType != "application/pdf" || a.Inline {
				t.Errorf("pdf attachment: %+v", p.Attachments)
			}
			if l := byName["logo.png"]; l.ContentID != "logo@broker" || !l.Inline {
				t.Errorf("inline image: %+v", l)
			}
			if !bytes.Contains(raw, []byte("filename*=")) {
				t.Errorf("filename not RFC 2231 encoded:\n%s", raw)
			}
			if !bytes.Contains(raw, []byte("List-Unsubscribe-Post: List-Unsubscribe=One-Click")) {
				t.Error("extra header missing")
			}

			// The customer is a local user: the mail is in the INBOX over IMAP.
			c, err := mail.DialIMAP(ctx(t), cfg, mail.Server{URL: s.IMAPURL(), Username: customer, Password: password})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Select("INBOX"); err != nil {
				t.Fatal(err)
			}
			f, err := c.FetchAfter(0, 10)
			if err != nil || len(f) != 1 {
				t.Fatalf("fetch: %v %d", err, len(f))
			}
			if mail.Parse(f[0].Raw).MessageID != p.MessageID {
				t.Error("IMAP copy differs")
			}
		})
	}
}

// TestSMTPErrors: a 4xx must be Temporary (the job retries), a 5xx permanent (the e-mail is
// failed with the server's answer), a wrong password ErrAuth (the mailbox pauses).
func TestSMTPErrors(t *testing.T) {
	s, cfg := start(t, mailserver.Options{})
	srv := mail.Server{URL: s.SMTPURL(), Username: broker, Password: password}
	raw, err := mail.Compose(mail.Message{From: mail.Address{Email: broker}, To: []mail.Address{{Email: customer}}, Subject: "x", Text: "y"})
	if err != nil {
		t.Fatal(err)
	}

	s.FailNext(451, "try again later")
	err = mail.Send(ctx(t), cfg, srv, broker, []string{customer}, raw)
	var se *mail.SMTPError
	if !errors.As(err, &se) || se.Code != 451 || !se.Temporary() || !strings.Contains(se.Message, "try again") {
		t.Fatalf("4xx: %v", err)
	}
	if errors.Is(err, mail.ErrAuth) {
		t.Fatal("4xx is no auth error")
	}

	s.FailNext(554, "rejected: spam")
	err = mail.Send(ctx(t), cfg, srv, broker, []string{customer}, raw)
	if !errors.As(err, &se) || se.Code != 554 || se.Temporary() {
		t.Fatalf("5xx: %v", err)
	}

	// After the injected failures a send goes through again.
	if err := mail.Send(ctx(t), cfg, srv, broker, []string{customer}, raw); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Received()); n != 1 {
		t.Fatalf("received %d, want 1 (failed sends are not recorded)", n)
	}

	bad := srv
	bad.Password = "wrong"
	err = mail.Send(ctx(t), cfg, bad, broker, []string{customer}, raw)
	if !errors.Is(err, mail.ErrAuth) || !errors.As(err, &se) || se.Code != 535 {
		t.Fatalf("wrong password: %v", err)
	}
}
