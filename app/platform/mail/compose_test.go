package mail_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
)

// TestComposeShapes: each body/attachment combination gives a MIME tree that parses back to the
// same content, with CRLF line ends and no line over 998 characters (RFC 5322 §2.1.1): it would
// catch a lost body in one of the branches, bare LFs that some servers reject, or an unfolded
// header.
func TestComposeShapes(t *testing.T) {
	long := strings.Repeat("Überlange Betreffzeile mit Umlauten äöü ", 12)
	date := time.Date(2026, 12, 24, 18, 30, 0, 0, time.FixedZone("CET", 3600))
	cases := map[string]mail.Message{
		"text only":  {Text: "Zeile 1\r\nZeile 2\nZeile 3"},
		"html only":  {HTML: "<p>Nur <i>HTML</i></p>"},
		"no body":    {},
		"long lines": {Text: strings.Repeat("x", 3000), Subject: long},
		"inline without cid and csv": {Text: "t", Attachments: []mail.Attachment{
			{Filename: "bild.jpg", ContentType: "image/jpeg", Inline: true, Data: []byte{0xff, 0xd8}},
			{Filename: "liste.csv", ContentType: "text/csv; charset=iso-8859-1", Data: []byte("a;b\n\xe4;\xf6\n")},
			{Data: []byte("namenlos")},
		}},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			m.From = mail.Address{Email: "a@broker.example", Name: "A"}
			m.To = []mail.Address{{Email: "b@customer.example"}}
			m.Date = date
			if m.Subject == "" {
				m.Subject = name
			}
			raw, err := mail.Compose(m)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range bytes.Split(raw, []byte("\r\n")) {
				if len(l) > 998 {
					t.Fatalf("line %d has %d characters", i, len(l))
				}
				if bytes.ContainsAny(l, "\r\n") {
					t.Fatalf("line %d has a bare CR or LF: %q", i, l)
				}
			}
			p := mail.Parse(raw)
			if len(p.Problems) > 0 {
				t.Fatalf("problems %q", p.Problems)
			}
			if p.Subject != m.Subject {
				t.Errorf("subject %q", p.Subject)
			}
			if !p.Date.Equal(date) {
				t.Errorf("date %v", p.Date)
			}
			wantText := strings.ReplaceAll(m.Text, "\r\n", "\n")
			if m.Text == "" && m.HTML != "" {
				wantText = mail.HTMLToText(m.HTML)
			}
			if p.Text != wantText {
				t.Errorf("text %q, want %q", p.Text, wantText)
			}
			if (m.HTML != "") != (p.HTML != "") {
				t.Errorf("html %q", p.HTML)
			}
			if len(p.Attachments) != len(m.Attachments) {
				t.Fatalf("attachments %+v", p.Attachments)
			}
			for i, a := range m.Attachments {
				if !bytes.Equal(p.Attachments[i].Data, a.Data) {
					t.Errorf("attachment %d data %q", i, p.Attachments[i].Data)
				}
				if a.Filename != "" && p.Attachments[i].Filename != a.Filename {
					t.Errorf("attachment %d filename %q", i, p.Attachments[i].Filename)
				}
			}
		})
	}
}

// TestComposeMessageID: an empty MessageID gets a fresh one in the sender's domain, a given one
// is kept; two messages never share one.
func TestComposeMessageID(t *testing.T) {
	m := mail.Message{From: mail.Address{Email: "a@broker.example"}, To: []mail.Address{{Email: "b@c.example"}}, Text: "x"}
	r1, _ := mail.Compose(m)
	r2, _ := mail.Compose(m)
	id1, id2 := mail.Parse(r1).MessageID, mail.Parse(r2).MessageID
	if id1 == id2 || !strings.HasSuffix(id1, "@broker.example") {
		t.Fatalf("ids %q %q", id1, id2)
	}
	m.MessageID = "fixed-1@broker.example"
	r3, _ := mail.Compose(m)
	if got := mail.Parse(r3).MessageID; got != m.MessageID {
		t.Fatalf("id %q", got)
	}
	if id := mail.NewMessageID(""); !strings.HasSuffix(id, "@localhost") || strings.ContainsAny(id, "<> ") {
		t.Fatalf("NewMessageID(\"\") = %q", id)
	}
}

// TestHTMLToText keeps the words and line structure and drops markup, script and style.
func TestHTMLToText(t *testing.T) {
	got := mail.HTMLToText(`<style>.a{}</style><p>Hallo&nbsp;Frau   M&uuml;ller,</p><p>Zeile<br>zwei</p><ul><li>eins</li><li>zwei</li></ul><script>x()</script>`)
	want := "Hallo Frau Müller,\nZeile\nzwei\n- eins\n- zwei"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
