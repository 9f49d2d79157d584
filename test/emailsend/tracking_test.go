package emailsend

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"io"
	netmail "net/mail"
	"strings"
	"testing"

	"github.com/emersion/go-message"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

const offerURL = "https://beispiel.de/angebot?x=1&y=2"

const marketingHTML = `<html><body><p>Hallo, hier Ihr <a href="https://beispiel.de/angebot?x=1&amp;y=2">Angebot</a>.</p></body></html>`

// htmlPart is the decoded text/html part of a raw message.
func htmlPart(t *testing.T, raw []byte) string {
	t.Helper()
	m, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out string
	err = m.Walk(func(_ []int, e *message.Entity, err error) error {
		if err != nil {
			return err
		}
		if mt, _, _ := e.Header.ContentType(); mt == "text/html" {
			b, err := io.ReadAll(e.Body)
			out = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// path is the part of a public URL from its path on (the server answers at its root).
func path(t *testing.T, u, marker string) string {
	t.Helper()
	i := strings.Index(u, marker)
	if i < 0 {
		t.Fatalf("%q has no %s", u, marker)
	}
	return u[i+1:]
}

// tamper changes one byte inside a token (not its MAC).
func tamper(t *testing.T, tok string, at int, to byte) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	b[at] = to
	return base64.RawURLEncoding.EncodeToString(b)
}

// TestTracking_OpenAndClick: a marketing mail's links go through the signed redirect and a
// pixel reports the first open; first open and click set the status and record one event each.
// Catches untracked links, an open redirect (a changed token or a URL not inside it
// redirecting), repeated events per open, and the pixel being cached.
func TestTracking_OpenAndClick(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 5)
	e := s.send(t, env, s.body("leser@kunde.test", map[string]any{"html": marketingHTML, "marketing": true}))
	if !e.Tracking || !e.Marketing {
		t.Fatalf("tracking %v marketing %v, want both", e.Tracking, e.Marketing)
	}
	if e.HTML != nil || e.Text == nil || strings.Contains(*e.Text, "/t/o/") {
		t.Errorf("the answer's body shows the tracking: %v", e.Text)
	}
	htm := htmlPart(t, received(t, srv, e.MessageID).Data)
	if strings.Contains(htm, `href="https://beispiel.de`) {
		t.Errorf("a link was not rewritten: %s", htm)
	}
	click := path(t, linkIn(t, htm, "/t/c/"), "/t/c/")
	pixel := path(t, linkIn(t, htm, "/t/o/"), "/t/o/")
	waitStatus(t, env, s.co.ID, e.ID, "sent")

	for i := 0; i < 2; i++ {
		r := do(t, env, "GET", pixel, nil, nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "image/gif" || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("pixel: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
		}
	}
	if st := statusOf(t, env, s.co.ID, e.ID); st != "opened" {
		t.Errorf("status %s after the pixel, want opened", st)
	}
	if n := len(eventsAbout(t, env, s.co.Secret, "email.opened", e.ID)); n != 1 {
		t.Errorf("%d email.opened events, want 1", n)
	}

	for i := 0; i < 2; i++ {
		r := do(t, env, "GET", click, nil, nil)
		if r.Status != 302 || r.Header.Get("Location") != offerURL {
			t.Fatalf("click: %d Location %q, want 302 %s", r.Status, r.Header.Get("Location"), offerURL)
		}
	}
	if st := statusOf(t, env, s.co.ID, e.ID); st != "clicked" {
		t.Errorf("status %s after the click, want clicked", st)
	}
	if n := len(eventsAbout(t, env, s.co.Secret, "email.clicked", e.ID)); n != 1 {
		t.Errorf("%d email.clicked events, want 1", n)
	}

	tok := strings.TrimPrefix(click, "t/c/")
	pixTok := strings.TrimSuffix(strings.TrimPrefix(pixel, "t/o/"), ".gif")
	env.Run(t, []apitest.Case{
		{Name: "a changed URL inside the click token", Method: "GET", Path: "//t/c/" + tamper(t, tok, 40, 'X'), Status: 404},
		{Name: "a changed e-mail id inside the click token", Method: "GET", Path: "//t/c/" + tamper(t, tok, 20, 0), Status: 404},
		{Name: "an open token used as a click token", Method: "GET", Path: "//t/c/" + pixTok, Status: 404},
		{Name: "garbage", Method: "GET", Path: "//t/c/bm90LWEtdG9rZW4", Status: 404},
		{Name: "a changed open token", Method: "GET", Path: "//t/o/" + tamper(t, pixTok, 5, 0) + ".gif", Status: 404},
	})
}

// TestTracking_NotAsked: mail without a marketing purpose is not tracked unless asked, and a
// company that turned tracking off is never tracked. Catches pixels in a broker's everyday
// mail and tracking the company refused.
func TestTracking_NotAsked(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 5)
	plain := s.send(t, env, s.body("leser@kunde.test", map[string]any{"html": marketingHTML}))
	asked := s.send(t, env, s.body("leser@kunde.test", map[string]any{"html": marketingHTML, "tracking": true}))
	if plain.Tracking || !asked.Tracking {
		t.Errorf("tracking: plain %v, asked %v", plain.Tracking, asked.Tracking)
	}
	if htm := htmlPart(t, received(t, srv, plain.MessageID).Data); strings.Contains(htm, "/t/o/") || strings.Contains(htm, "/t/c/") {
		t.Errorf("untracked mail carries tracking: %s", htm)
	}
	if htm := htmlPart(t, received(t, srv, asked.MessageID).Data); !strings.Contains(htm, "/t/o/") {
		t.Errorf("tracked mail without pixel: %s", htm)
	}

	err := env.Operator(context.Background(), s.co.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec("UPDATE companies SET email_tracking = false WHERE id = $1", s.co.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	off := s.send(t, env, s.body("leser@kunde.test", map[string]any{"html": marketingHTML, "marketing": true}))
	if off.Tracking {
		t.Error("tracked although the company turned tracking off")
	}
	if htm := htmlPart(t, received(t, srv, off.MessageID).Data); strings.Contains(htm, "/t/o/") {
		t.Errorf("pixel although the company turned tracking off: %s", htm)
	}
}

type optOut struct {
	Email  string `json:"email"`
	Source string `json:"source"`
}

func optOuts(t *testing.T, env *apitest.Env, key string) []optOut {
	t.Helper()
	var p apitest.Page[optOut]
	r := env.Do(t, apitest.Request{Path: "/email-opt-outs", Key: key})
	if r.Status != 200 {
		t.Fatalf("opt-outs: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &p)
	return p.Data
}

// TestTracking_Unsubscribe: a marketing mail carries List-Unsubscribe with one-click (RFC
// 8058) and a link in its body; GET shows a page and changes nothing (link scanners follow
// GETs), POST puts the address on the opt-out list, and the next marketing mail to it is
// refused. Catches a GET that unsubscribes, a POST that does not, a forged token accepted, and
// marketing mail ignoring the list.
func TestTracking_Unsubscribe(t *testing.T) {
	t.Parallel()
	env, srv := setup(t)
	s := newSender(t, env, nil, 5)
	e := s.send(t, env, s.body("Leser@Kunde.test", map[string]any{"marketing": true}))
	raw := received(t, srv, e.MessageID).Data
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	header := msg.Header.Get("List-Unsubscribe")
	if msg.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || !strings.HasPrefix(header, "<http") {
		t.Fatalf("List-Unsubscribe %q, List-Unsubscribe-Post %q", header, msg.Header.Get("List-Unsubscribe-Post"))
	}
	u := path(t, strings.Trim(header, "<>"), "/u/")
	if e.Text == nil || !strings.Contains(*e.Text, "/"+u) {
		t.Errorf("the body has no unsubscribe link: %v", e.Text)
	}

	r := do(t, env, "GET", u, nil, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), "<form method=\"post\"") {
		t.Fatalf("page: %d %s", r.Status, r.Body)
	}
	if got := optOuts(t, env, s.co.Secret); len(got) != 0 {
		t.Fatalf("GET unsubscribed: %v", got)
	}
	for i := 0; i < 2; i++ {
		r = do(t, env, "POST", u, "List-Unsubscribe=One-Click", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		if r.Status != 200 {
			t.Fatalf("one-click: %d %s", r.Status, r.Body)
		}
	}
	got := optOuts(t, env, s.co.Secret)
	if len(got) != 1 || got[0].Email != "leser@kunde.test" || got[0].Source != "unsubscribe" {
		t.Errorf("opt-outs %v, want leser@kunde.test from unsubscribe", got)
	}
	env.Run(t, []apitest.Case{
		{Name: "the next marketing mail is refused", Key: s.co.Secret, Method: "POST", Path: "/emails",
			Body: s.body("leser@kunde.test", map[string]any{"marketing": true}), Status: 422,
			Check: apitest.FieldErrors("to.0.email:opted_out")},
		{Name: "other mail still goes", Key: s.co.Secret, Method: "POST", Path: "/emails",
			Body: s.body("leser@kunde.test", nil), Status: 201},
		{Name: "a changed address in the token", Method: "POST", Path: "//u/" + tamper(t, strings.TrimPrefix(u, "u/"), 35, 'x'),
			Status: 404},
		{Name: "a changed token on the page", Method: "GET", Path: "//u/" + tamper(t, strings.TrimPrefix(u, "u/"), 2, 0), Status: 404},
	})
}
