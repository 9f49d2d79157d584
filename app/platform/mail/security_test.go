package mail_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
)

// TestHeaderInjection: CR or LF in any header value would let a caller (or a contact's name
// from the database) add header fields, e.g. a Bcc; Compose must refuse each with *HeaderError.
func TestHeaderInjection(t *testing.T) {
	ok := mail.Message{From: mail.Address{Email: broker}, To: []mail.Address{{Email: customer}}, Subject: "Hallo", Text: "x"}
	if _, err := mail.Compose(ok); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(m *mail.Message){
		"subject LF":         func(m *mail.Message) { m.Subject = "Hallo\nBcc: evil@example.com" },
		"subject CR":         func(m *mail.Message) { m.Subject = "Hallo\rBcc: evil@example.com" },
		"subject NUL":        func(m *mail.Message) { m.Subject = "Hallo\x00" },
		"from name":          func(m *mail.Message) { m.From.Name = "Makler\r\nBcc: evil@example.com" },
		"to name":            func(m *mail.Message) { m.To[0].Name = "Kunde\nX: y" },
		"to address CRLF":    func(m *mail.Message) { m.To[0].Email = "kunde@customer.example\r\nBcc: evil@example.com" },
		"to address invalid": func(m *mail.Message) { m.To[0].Email = "kein-at-zeichen" },
		"to address comma":   func(m *mail.Message) { m.To[0].Email = "a@b.example, evil@example.com" },
		"to address angle":   func(m *mail.Message) { m.To[0].Email = "a@b.example>" },
		"to address empty":   func(m *mail.Message) { m.To[0].Email = "" },
		"cc address":         func(m *mail.Message) { m.Cc = []mail.Address{{Email: "x@y.example\n"}} },
		"bcc address":        func(m *mail.Message) { m.Bcc = []mail.Address{{Email: "not an address"}} },
		"reply-to":           func(m *mail.Message) { m.ReplyTo = &mail.Address{Email: "r@y.example", Name: "a\nb"} },
		"message id":         func(m *mail.Message) { m.MessageID = "abc@x\r\nBcc: e@x" },
		"message id angle":   func(m *mail.Message) { m.MessageID = "<abc@x>" },
		"in-reply-to":        func(m *mail.Message) { m.InReplyTo = "a@b\n" },
		"references":         func(m *mail.Message) { m.References = []string{"ok@x", "bad\r@x"} },
		"extra header value": func(m *mail.Message) { m.Headers = [][2]string{{"List-Unsubscribe", "<https://x>\r\nBcc: e@x"}} },
		"extra header name":  func(m *mail.Message) { m.Headers = [][2]string{{"X-Evil\r\nBcc", "e@x"}} },
		"extra header colon": func(m *mail.Message) { m.Headers = [][2]string{{"X:Y", "v"}} },
		"extra header bcc":   func(m *mail.Message) { m.Headers = [][2]string{{"bcc", "e@x.example"}} },
		"attachment name":    func(m *mail.Message) { m.Attachments = []mail.Attachment{{Filename: "a\r\n.pdf", Data: []byte("x")}} },
		"attachment type": func(m *mail.Message) {
			m.Attachments = []mail.Attachment{{Filename: "a.pdf", ContentType: "text/plain\nX: y"}}
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			m := ok
			m.To = []mail.Address{{Email: customer}}
			mutate(&m)
			raw, err := mail.Compose(m)
			var he *mail.HeaderError
			if !errors.As(err, &he) || he.Field == "" {
				t.Fatalf("want *HeaderError, got %v\n%s", err, raw)
			}
		})
	}
	if err := mail.CheckHeader("Subject", "Grüße aus Köln"); err != nil {
		t.Fatal(err)
	}
	var he *mail.HeaderError
	if err := mail.CheckHeader("Subject", "a\nb"); !errors.As(err, &he) || he.Field != "Subject" {
		t.Fatalf("CheckHeader: %v", err)
	}
}

// TestSendRefusesInjectedEnvelope: the envelope addresses go into SMTP commands, where a CRLF
// would start a command of its own.
func TestSendRefusesInjectedEnvelope(t *testing.T) {
	s, cfg := start(t, mailserver.Options{})
	srv := mail.Server{URL: s.SMTPURL()}
	raw := rawMessage(t, 1)
	for _, rc := range [][2]string{
		{broker + "\r\nRCPT TO:<evil@example.com>", customer},
		{broker, customer + "\r\nRCPT TO:<evil@example.com>"},
		{broker, "kein-at"},
	} {
		if err := mail.Send(ctx(t), cfg, srv, rc[0], []string{rc[1]}, raw); err == nil {
			t.Fatalf("envelope %q -> %q accepted", rc[0], rc[1])
		}
	}
	if err := mail.Send(ctx(t), cfg, srv, broker, nil, raw); err == nil {
		t.Fatal("no recipients accepted")
	}
	if n := len(s.Received()); n != 0 {
		t.Fatalf("%d messages went out", n)
	}
}

// fakeSMTP answers like an SMTP server without STARTTLS that offers AUTH PLAIN, and records every
// line it receives.
func fakeSMTP(t *testing.T) (addr string, lines func() []string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on loopback: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var got []string
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func(conn net.Conn) {
				defer conn.Close()
				_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
				w := bufio.NewWriter(conn)
				w.WriteString("220 fake ESMTP\r\n")
				w.Flush()
				r := bufio.NewReader(conn)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					mu.Lock()
					got = append(got, strings.TrimSpace(l))
					mu.Unlock()
					switch {
					case strings.HasPrefix(strings.ToUpper(l), "EHLO"):
						w.WriteString("250-fake\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n")
					case strings.HasPrefix(strings.ToUpper(l), "QUIT"):
						w.WriteString("221 bye\r\n")
						w.Flush()
						return
					default:
						w.WriteString("502 no\r\n")
					}
					w.Flush()
				}
			}(conn)
		}
	}()
	return ln.Addr().String(), func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

// TestNoPlaintextToRemoteHost: a server on a non-loopback address without STARTTLS (or an
// attacker who stripped it) must never see the password: Send and Check fail with ErrInsecure
// before AUTH.
func TestNoPlaintextToRemoteHost(t *testing.T) {
	// The server answers on loopback, but the client is asked for a remote name (Config.Dial
	// connects that name to the fake server): whether plaintext is allowed follows the name in
	// the URL, so this holds on any machine.
	addr, lines := fakeSMTP(t)
	const remote = "smtp.makler-provider.example:25"
	cfg := mail.Config{Timeout: 5 * time.Second, Dial: func(ctx context.Context, network, a string) (net.Conn, error) {
		if a != remote {
			return nil, fmt.Errorf("dial %s: only %s is reachable here", a, remote)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	srv := mail.Server{URL: "smtp://" + remote, Username: broker, Password: "top-secret"}
	err := mail.Send(ctx(t), cfg, srv, broker, []string{customer}, rawMessage(t, 1))
	if !errors.Is(err, mail.ErrInsecure) {
		t.Fatalf("want ErrInsecure, got %v", err)
	}
	_, smtpErr := mail.Check(ctx(t), cfg, mail.Server{URL: "imap://" + remote}, srv)
	if !errors.Is(smtpErr, mail.ErrInsecure) {
		t.Fatalf("Check: want ErrInsecure, got %v", smtpErr)
	}
	for _, l := range lines() {
		if strings.HasPrefix(strings.ToUpper(l), "AUTH") || strings.Contains(l, "top-secret") {
			t.Fatalf("the password went out in plaintext: %q", l)
		}
	}
}

// TestSendHonoursContext: a server that accepts the connection and never greets must not hang a
// send beyond its context (a stuck job would hold the mailbox's lock).
func TestSendHonoursContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the listener closes
		}
	}()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		ctx     time.Duration
	}{{"context", time.Minute, 300 * time.Millisecond}, {"config timeout", 300 * time.Millisecond, time.Minute}} {
		t.Run(tc.name, func(t *testing.T) {
			c, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			start := time.Now()
			err := mail.Send(c, mail.Config{Timeout: tc.timeout}, mail.Server{URL: "smtp://" + ln.Addr().String()}, broker, []string{customer}, rawMessage(t, 1))
			if err == nil {
				t.Fatal("send to a silent server succeeded")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
			_, err = mail.DialIMAP(c, mail.Config{Timeout: tc.timeout}, mail.Server{URL: "imap://" + ln.Addr().String()})
			if err == nil {
				t.Fatal("IMAP to a silent server succeeded")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("IMAP took %v", d)
			}
		})
	}
}
