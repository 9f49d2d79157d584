package mail_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/emersion/go-imap/v2/imapclient"
)

func rawMessage(t *testing.T, i int) []byte {
	t.Helper()
	raw, err := mail.Compose(mail.Message{
		From:    mail.Address{Email: customer},
		To:      []mail.Address{{Email: broker}},
		Subject: fmt.Sprintf("Nachricht %d", i),
		Text:    fmt.Sprintf("Text %d", i),
	})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestIMAPSync walks a folder the way the sync job does: it would catch a FetchAfter that
// repeats the last message when nothing is new (UID n:* always matches the highest UID), one that
// skips or reorders messages across batches, and a Select without UIDVALIDITY.
func TestIMAPSync(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "starttls"}[withTLS], func(t *testing.T) {
			s, cfg := start(t, mailserver.Options{TLS: withTLS})
			c, err := mail.DialIMAP(ctx(t), cfg, mail.Server{URL: s.IMAPURL(), Username: broker, Password: password})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()

			st, err := c.Select("INBOX")
			if err != nil {
				t.Fatal(err)
			}
			if st.UIDValidity == 0 || st.UIDNext != 1 {
				t.Fatalf("empty INBOX: %+v", st)
			}
			if f, err := c.FetchAfter(0, 10); err != nil || len(f) != 0 {
				t.Fatalf("empty folder: %v %d", err, len(f))
			}

			for i := 1; i <= 7; i++ {
				if err := s.Deliver(broker, rawMessage(t, i)); err != nil {
					t.Fatal(err)
				}
			}
			st2, err := c.Select("INBOX")
			if err != nil {
				t.Fatal(err)
			}
			if st2.UIDValidity != st.UIDValidity || st2.UIDNext != 8 || st2.Messages != 7 {
				t.Fatalf("after 7 deliveries: %+v", st2)
			}

			var subjects []string
			var last uint32
			for round := 0; ; round++ {
				if round > 10 {
					t.Fatal("FetchAfter never ends")
				}
				batch, err := c.FetchAfter(last, 3)
				if err != nil {
					t.Fatal(err)
				}
				if len(batch) == 0 {
					break
				}
				if len(batch) > 3 {
					t.Fatalf("batch of %d, max 3", len(batch))
				}
				for _, f := range batch {
					if f.UID <= last {
						t.Fatalf("UID %d after %d", f.UID, last)
					}
					last = f.UID
					subjects = append(subjects, mail.Parse(f.Raw).Subject)
				}
			}
			if got := strings.Join(subjects, ","); got != "Nachricht 1,Nachricht 2,Nachricht 3,Nachricht 4,Nachricht 5,Nachricht 6,Nachricht 7" {
				t.Fatalf("synced %s", got)
			}
			// The n:* pitfall: asking past the highest UID answers nothing, also far past it.
			for _, after := range []uint32{7, 8, 1000} {
				if f, err := c.FetchAfter(after, 10); err != nil || len(f) != 0 {
					t.Fatalf("FetchAfter(%d): %v, %d messages", after, err, len(f))
				}
			}
			// A new message shows up after the last UID.
			if err := s.Deliver(broker, rawMessage(t, 8)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Select("INBOX"); err != nil {
				t.Fatal(err)
			}
			f, err := c.FetchAfter(last, 10)
			if err != nil || len(f) != 1 || f[0].UID != 8 || mail.Parse(f[0].Raw).Subject != "Nachricht 8" {
				t.Fatalf("new message: %v %+v", err, f)
			}
		})
	}
}

// TestIMAPSentFolder: the sent copy lands in the Sent folder (created when the server has none)
// and is \Seen; it would catch an Append to a wrong or missing folder.
func TestIMAPSentFolder(t *testing.T) {
	s, cfg := start(t, mailserver.Options{})
	c, err := mail.DialIMAP(ctx(t), cfg, mail.Server{URL: s.IMAPURL(), Username: broker, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent, err := c.SentFolder()
	if err != nil || sent != "Sent" {
		t.Fatalf("sent folder %q %v", sent, err)
	}
	raw := rawMessage(t, 1)
	if err := c.Append(sent, raw, true); err != nil {
		t.Fatal(err)
	}
	st, err := c.Select(sent)
	if err != nil || st.Messages != 1 {
		t.Fatalf("select Sent: %+v %v", st, err)
	}
	f, err := c.FetchAfter(0, 10)
	if err != nil || len(f) != 1 || string(f[0].Raw) != string(raw) {
		t.Fatalf("fetch Sent: %v %d", err, len(f))
	}
	if err := c.Append("Nirgendwo", raw, true); err == nil {
		t.Fatal("append to a missing folder succeeded")
	}

	// The sent folder is found by its \Sent attribute, not by its name: renamed, it is still
	// the one (a SentFolder that only looked for "Sent" would create a second folder).
	raw2 := rawIMAP(t, s.IMAPURL())
	if err := raw2.Login(broker, password).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := raw2.Rename("Sent", "Gesendete Objekte", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	if name, err := c.SentFolder(); err != nil || name != "Gesendete Objekte" {
		t.Fatalf("renamed sent folder: %q %v", name, err)
	}
	// Without any sent folder, SentFolder creates "Sent" (marked \Sent) once.
	if err := raw2.Delete("Gesendete Objekte").Wait(); err != nil {
		t.Fatal(err)
	}
	raw2.Close()
	for i := 0; i < 2; i++ {
		if name, err := c.SentFolder(); err != nil || name != "Sent" {
			t.Fatalf("SentFolder #%d: %q %v", i, name, err)
		}
	}
}

// rawIMAP is a plain imapclient for what mail.IMAP does not offer (rename, delete).
func rawIMAP(t *testing.T, url string) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(strings.TrimPrefix(url, "imap://"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIMAPLoginRefused: a changed password must be ErrAuth (the sync pauses the mailbox instead
// of retrying); a dead server must not be.
func TestIMAPLoginRefused(t *testing.T) {
	s, cfg := start(t, mailserver.Options{TLS: true})
	srv := mail.Server{URL: s.IMAPURL(), Username: broker, Password: password}
	c, err := mail.DialIMAP(ctx(t), cfg, srv)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := s.SetPassword(broker, "neues-passwort"); err != nil {
		t.Fatal(err)
	}
	_, err = mail.DialIMAP(ctx(t), cfg, srv)
	if !errors.Is(err, mail.ErrAuth) {
		t.Fatalf("after SetPassword: %v", err)
	}
	// SMTP refuses the old password the same way.
	imapErr, smtpErr := mail.Check(ctx(t), cfg, srv, mail.Server{URL: s.SMTPURL(), Username: broker, Password: password})
	if !errors.Is(imapErr, mail.ErrAuth) || !errors.Is(smtpErr, mail.ErrAuth) {
		t.Fatalf("Check: imap %v, smtp %v", imapErr, smtpErr)
	}
	imapErr, smtpErr = mail.Check(ctx(t), cfg,
		mail.Server{URL: s.IMAPURL(), Username: broker, Password: "neues-passwort"},
		mail.Server{URL: s.SMTPURL(), Username: broker, Password: "neues-passwort"})
	if imapErr != nil || smtpErr != nil {
		t.Fatalf("Check with the new password: imap %v, smtp %v", imapErr, smtpErr)
	}

	// Nothing listens: an error, but no verdict on the password.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = mail.DialIMAP(ctx(t), cfg, mail.Server{URL: "imap://" + addr, Username: broker, Password: password})
	if err == nil || errors.Is(err, mail.ErrAuth) {
		t.Fatalf("dead server: %v", err)
	}
}

// TestIMAPTLSUntrusted: with STARTTLS offered, a client that does not trust the certificate
// fails instead of falling back to plaintext.
func TestIMAPTLSUntrusted(t *testing.T) {
	s, _ := start(t, mailserver.Options{TLS: true})
	_, err := mail.DialIMAP(ctx(t), mail.Config{}, mail.Server{URL: s.IMAPURL(), Username: broker, Password: password})
	if err == nil || errors.Is(err, mail.ErrAuth) {
		t.Fatalf("untrusted certificate: %v", err)
	}
	err = mail.Send(ctx(t), mail.Config{}, mail.Server{URL: s.SMTPURL(), Username: broker, Password: password}, broker, []string{customer}, rawMessage(t, 1))
	if err == nil {
		t.Fatal("SMTP with an untrusted certificate succeeded")
	}
	if len(s.Received()) != 0 {
		t.Fatal("message delivered over an untrusted connection")
	}
}
