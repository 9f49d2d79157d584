package mail_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseLatin1: an ISO-8859-1 body and RFC 2047 Latin-1 words must come out as UTF-8 umlauts
// (a parser without charset support keeps the bytes and stores mojibake).
func TestParseLatin1(t *testing.T) {
	p := mail.Parse(readTestdata(t, "latin1.eml"))
	if len(p.Problems) > 0 {
		t.Fatalf("problems %q", p.Problems)
	}
	if p.Text != "Schöne Grüße aus Köln" {
		t.Errorf("text %q", p.Text)
	}
	if p.Subject != "Grüße" || p.From.Name != "Jürgen Müller" || p.From.Email != "j@example.de" {
		t.Errorf("subject %q from %+v", p.Subject, p.From)
	}
	if want := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC); !p.Date.Equal(want) {
		t.Errorf("date %v", p.Date)
	}
	if p.MessageID != "latin1@example.de" {
		t.Errorf("message id %q", p.MessageID)
	}
}

// TestParseUnknownCharset: an unknown charset is a Problem, not a failure, and the text is still
// valid UTF-8 (here read as Latin-1, the likely guess for 8-bit German text).
func TestParseUnknownCharset(t *testing.T) {
	p := mail.Parse(readTestdata(t, "unknown-charset.eml"))
	if len(p.Problems) == 0 || !strings.Contains(strings.Join(p.Problems, ";"), "charset") {
		t.Fatalf("problems %q", p.Problems)
	}
	if p.Text != "München ist schön" {
		t.Errorf("text %q", p.Text)
	}
	if p.MessageID != "unknown-charset@example.de" || p.From.Email != "a@example.de" {
		t.Errorf("headers lost: %+v", p)
	}
}

// TestParseBrokenBoundary: a multipart whose boundary never appears keeps its body as text with
// a Problem, instead of an empty message.
func TestParseBrokenBoundary(t *testing.T) {
	p := mail.Parse(readTestdata(t, "broken-boundary.eml"))
	if len(p.Problems) == 0 {
		t.Fatal("no problem reported")
	}
	if !strings.Contains(p.Text, "Der Text ist trotzdem da.") {
		t.Errorf("text %q", p.Text)
	}
	if p.Subject != "kaputt" {
		t.Errorf("subject %q", p.Subject)
	}
}

// TestParseSanitizesHTML: script, style, event handlers, javascript: URLs and iframes must be
// gone before the HTML is stored or served; links, formatting and cid: images stay; the text is
// derived without the script's or style's content.
func TestParseSanitizesHTML(t *testing.T) {
	p := mail.Parse(readTestdata(t, "html-script.eml"))
	for _, bad := range []string{"<script", "alert(1)", "onclick", "onerror", "javascript:", "<iframe", "<style", "color:red"} {
		if strings.Contains(p.HTML, bad) {
			t.Errorf("sanitised HTML still has %q: %s", bad, p.HTML)
		}
	}
	for _, good := range []string{"<b>Welt</b>", `href="https://example.de/a"`, `src="cid:logo@x"`, `src="https://t.example/p.gif"`} {
		if !strings.Contains(p.HTML, good) {
			t.Errorf("sanitised HTML lost %q: %s", good, p.HTML)
		}
	}
	if strings.Contains(p.Text, "alert") || strings.Contains(p.Text, "color") || !strings.Contains(p.Text, "Hallo Welt") {
		t.Errorf("text %q", p.Text)
	}
	if got := mail.Sanitize(`<a href="JaVaScRiPt:alert(1)">x</a><svg onload=alert(1)></svg><form action="https://x"><input></form>`); strings.Contains(strings.ToLower(got), "javascript") || strings.Contains(got, "onload") || strings.Contains(got, "<form") || strings.Contains(got, "<input") {
		t.Errorf("Sanitize: %s", got)
	}
}

// TestParseDSN: a bounce must say which of our messages failed (Original-Message-ID from the
// returned headers) and why; of two recipients the failed one wins.
func TestParseDSN(t *testing.T) {
	p := mail.Parse(readTestdata(t, "dsn.eml"))
	if p.DSN == nil {
		t.Fatalf("no DSN; problems %q", p.Problems)
	}
	want := mail.DSN{OriginalMessageID: "orig-42@broker.example", Action: "failed", Status: "5.1.1",
		Diagnostic: "550 5.1.1 <kunde@customer.example>: Recipient address rejected: User unknown"}
	if *p.DSN != want {
		t.Errorf("DSN %+v", *p.DSN)
	}
	if !strings.Contains(p.Text, "could not be delivered") {
		t.Errorf("text %q", p.Text)
	}

	// Original-Message-ID in the per-message block, a delayed report, no returned headers.
	raw := strings.ReplaceAll(`From: postmaster@mx.example
To: makler@broker.example
Subject: Delayed Mail
Content-Type: multipart/report; report-type=delivery-status; boundary=B

--B
Content-Type: text/plain

Still trying.
--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example
Original-Message-ID: <orig-7@broker.example>

Final-Recipient: rfc822; kunde@customer.example
Action: Delayed
Status: 4.4.7

--B--
`, "\n", "\r\n")
	p = mail.Parse([]byte(raw))
	if p.DSN == nil || p.DSN.OriginalMessageID != "orig-7@broker.example" || p.DSN.Action != "delayed" || p.DSN.Status != "4.4.7" {
		t.Fatalf("DSN %+v problems %q", p.DSN, p.Problems)
	}
	// A normal message has no DSN.
	if mail.Parse(readTestdata(t, "latin1.eml")).DSN != nil {
		t.Error("DSN on a normal message")
	}
}

// TestParseMalformed: messages a real mailbox contains; none may panic, each yields what can be
// read.
func TestParseMalformed(t *testing.T) {
	cases := map[string]struct {
		raw   string
		check func(*testing.T, *mail.Parsed)
	}{
		"empty": {"", func(t *testing.T, p *mail.Parsed) {}},
		"no header end": {"From: a@b.example\r\nSubject: x", func(t *testing.T, p *mail.Parsed) {
			if p.Subject != "x" || p.From.Email != "a@b.example" {
				t.Errorf("%+v", p)
			}
		}},
		"garbage header line": {"From: a@b.example\r\nthis is no header\r\nSubject: hi\r\n\r\nbody", func(t *testing.T, p *mail.Parsed) {
			if p.Subject != "hi" || !strings.Contains(p.Text, "body") {
				t.Errorf("subject %q text %q", p.Subject, p.Text)
			}
		}},
		"bad from": {"From: Jürgen <<broken@@example>\r\nTo: ok@example.de, <also broken\r\n\r\nx", func(t *testing.T, p *mail.Parsed) {
			if len(p.Problems) == 0 {
				t.Error("no problem")
			}
			if len(p.To) != 1 || p.To[0].Email != "ok@example.de" {
				t.Errorf("to %+v", p.To)
			}
		}},
		"bad date and ids": {"From: a@b.example\r\nDate: gestern\r\nMessage-ID: no-brackets@b.example\r\nReferences: <a@x> junk <b@y>\r\n\r\nx", func(t *testing.T, p *mail.Parsed) {
			if !p.Date.IsZero() || p.MessageID != "no-brackets@b.example" || strings.Join(p.References, ",") != "a@x,b@y" {
				t.Errorf("date %v id %q refs %q", p.Date, p.MessageID, p.References)
			}
		}},
		"bad base64": {"From: a@b.example\r\nContent-Type: multipart/mixed; boundary=X\r\n\r\n--X\r\nContent-Type: text/plain\r\n\r\nhallo\r\n--X\r\nContent-Type: application/pdf; name=a.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64***\r\n--X--\r\n", func(t *testing.T, p *mail.Parsed) {
			if p.Text != "hallo" || len(p.Attachments) != 1 || p.Attachments[0].Filename != "a.pdf" {
				t.Errorf("text %q attachments %+v", p.Text, p.Attachments)
			}
		}},
		"unknown encoding": {"From: a@b.example\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nabc", func(t *testing.T, p *mail.Parsed) {
			if len(p.Problems) == 0 || p.Text != "abc" {
				t.Errorf("problems %q text %q", p.Problems, p.Text)
			}
		}},
		"multipart without boundary": {"From: a@b.example\r\nContent-Type: multipart/mixed\r\n\r\nplain body", func(t *testing.T, p *mail.Parsed) {
			if !strings.Contains(p.Text, "plain body") || len(p.Problems) == 0 {
				t.Errorf("text %q problems %q", p.Text, p.Problems)
			}
		}},
		"unterminated multipart": {"From: a@b.example\r\nContent-Type: multipart/mixed; boundary=X\r\n\r\n--X\r\nContent-Type: text/plain\r\n\r\nerster Teil", func(t *testing.T, p *mail.Parsed) {
			if !strings.Contains(p.Text, "erster Teil") {
				t.Errorf("text %q problems %q", p.Text, p.Problems)
			}
		}},
		"path in filename": {"From: a@b.example\r\nContent-Type: multipart/mixed; boundary=X\r\n\r\n--X\r\nContent-Disposition: attachment; filename=\"../../etc/passwd\"\r\n\r\nroot\r\n--X--\r\n", func(t *testing.T, p *mail.Parsed) {
			if len(p.Attachments) != 1 || p.Attachments[0].Filename != "passwd" {
				t.Errorf("attachments %+v", p.Attachments)
			}
		}},
		"8bit header without charset": {"From: M\xfcller <m@b.example>\r\nSubject: Gr\xfc\xdfe\r\n\r\nx", func(t *testing.T, p *mail.Parsed) {
			if p.Subject != "Grüße" {
				t.Errorf("subject %q", p.Subject)
			}
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := mail.Parse([]byte(c.raw))
			if p == nil {
				t.Fatal("nil")
			}
			c.check(t, p)
		})
	}
}

// TestParseDeepNesting: a bomb of nested multiparts stops at the depth limit instead of
// recursing without bound.
func TestParseDeepNesting(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("From: a@b.example\r\n")
	for i := 0; i < 200; i++ {
		b.WriteString("Content-Type: multipart/mixed; boundary=b" + itoa(i) + "\r\n\r\n--b" + itoa(i) + "\r\n")
	}
	b.WriteString("Content-Type: text/plain\r\n\r\ninnen\r\n")
	p := mail.Parse(b.Bytes())
	if len(p.Problems) == 0 {
		t.Fatal("no problem for 200 levels")
	}
}

func itoa(i int) string {
	return strings.TrimLeft(string([]byte{byte('0' + i/100), byte('0' + i/10%10), byte('0' + i%10)}), "0")
}

// FuzzParse: Parse never panics (it recovers, but a recovered panic is a bug: it shows up as a
// "parser failure" problem) and always returns valid UTF-8 text.
func FuzzParse(f *testing.F) {
	entries, _ := os.ReadDir("testdata")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".eml") {
			f.Add(readTestdata(f, e.Name()))
		}
	}
	f.Add([]byte("From: a@b\r\nContent-Type: multipart/alternative; boundary=x\r\n\r\n--x\r\nContent-Type: text/html\r\n\r\n<p>x\r\n--x--"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := mail.Parse(raw)
		if p == nil {
			t.Fatal("nil")
		}
		for _, pr := range p.Problems {
			if strings.HasPrefix(pr, "parser failure") {
				t.Fatalf("panic inside Parse: %s", pr)
			}
		}
		for _, s := range []string{p.Subject, p.Text, p.HTML, p.From.Name} {
			if !isUTF8(s) {
				t.Fatalf("invalid UTF-8: %q", s)
			}
		}
	})
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
