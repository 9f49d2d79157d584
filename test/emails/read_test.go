package emails

import (
	"context"
	"database/sql"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestEmailThreads_List: latest message first across pages, each filter, q over subject,
// address and text. Catches an order by creation instead of last message, a filter that is
// ignored or not bound to the cursor, a q that matches case-sensitively or treats % and _ as
// wildcards.
func TestEmailThreads_List(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	mb, other := mailbox(t, env, co, nil), mailbox(t, env, co, nil)
	kai := contact(t, env, co.ID, nil)
	lea := lead(t, env, co.ID, nil)
	base := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	// Created in this order, but the latest message decides: t3 (base+3h), t1 (+2h), t2 (+1h).
	t1 := thread(t, env, co.ID, mb,
		msg{From: "kunde@example.com", To: "box@makler.test", Subject: "Kfz-Schaden", Text: "Hallo", At: base},
		msg{From: "box@makler.test", To: "kunde@example.com", Subject: "Re: Kfz-Schaden", Text: "Danke", At: base.Add(2 * time.Hour),
			Direction: "outbound", Contacts: []uuid.UUID{kai}})
	t2 := thread(t, env, co.ID, other, msg{From: "Versicherer@Allianz.example", To: "box@makler.test", Subject: "Beitragsanpassung",
		Text: "Der Beitrag steigt um 100%_ab Januar", At: base.Add(time.Hour), Leads: []uuid.UUID{lea}})
	t3 := thread(t, env, co.ID, mb, msg{From: "info@example.com", To: "box@makler.test", Subject: "Newsletter",
		Text: "Wohngebäudeversicherung im Überblick", At: base.Add(3 * time.Hour)})

	key := co.KeyWithScopes(t, "emails:read")
	if got, want := threads(t, env, key, ""), []string{t3.Thread.String(), t1.Thread.String(), t2.Thread.String()}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	t.Run("pages continue in order", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Path: "/email-threads?limit=2", Key: key})
		var p apitest.Page[threadView]
		r.Decode(t, &p)
		if len(p.Data) != 2 || !p.Pagination.HasMore || p.Data[0].ID != t3.Thread.String() {
			t.Fatalf("first page %+v", p)
		}
		if p.Data[1].MessageCount != 2 || len(p.Data[1].ContactIDs) != 1 || p.Data[1].ContactIDs[0] != kai.String() {
			t.Errorf("thread t1 as listed: %+v", p.Data[1])
		}
		next := threads(t, env, key, "limit=2&cursor="+url.QueryEscape(p.Pagination.NextCursor))
		if !slices.Equal(next, []string{t2.Thread.String()}) {
			t.Errorf("second page %v, want [t2]", next)
		}
		// The cursor is bound to the filters.
		r = env.Do(t, apitest.Request{Path: "/email-threads?limit=2&q=kfz&cursor=" + url.QueryEscape(p.Pagination.NextCursor), Key: key})
		if r.Status != 422 {
			t.Errorf("cursor with another filter: %d, want 422", r.Status)
		}
	})
	for _, tc := range []struct {
		name, query string
		want        []seeded
	}{
		{"mailboxId", "mailboxId=" + other.String(), []seeded{t2}},
		{"contactId", "contactId=" + kai.String(), []seeded{t1}},
		{"leadId", "leadId=" + lea.String(), []seeded{t2}},
		{"updatedSince in the future", "updatedSince=2099-01-01T00:00:00Z", nil},
		{"updatedSince in the past", "updatedSince=2000-01-01T00:00:00Z", []seeded{t3, t1, t2}},
		{"q in the subject, any case", "q=KFZ-scha", []seeded{t1}},
		{"q in an address", "q=allianz.example", []seeded{t2}},
		{"q in the text of a later message", "q=danke", []seeded{t1}},
		{"q with umlauts", "q=" + url.QueryEscape("ÜBERBLICK"), []seeded{t3}},
		{"q with LIKE wildcards literally", "q=" + url.QueryEscape("100%_ab"), []seeded{t2}},
		{"q percent alone matches no wildcard", "q=" + url.QueryEscape("%%"), nil},
		{"q underscore pair", "q=__", nil},
		{"q without a match", "q=hausrat", nil},
		{"q and mailboxId", "q=kfz&mailboxId=" + other.String(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := []string{}
			for _, s := range tc.want {
				want = append(want, s.Thread.String())
			}
			if got := threads(t, env, key, tc.query); !slices.Equal(got, want) {
				t.Errorf("?%s: %v, want %v", tc.query, got, want)
			}
		})
	}

	b := newCompany(t, env)
	env.Run(t, []apitest.Case{
		{Name: "q of one character is 422", Key: key, Path: "/email-threads?q=k", Status: 422,
			Check: apitest.FieldErrors("q:too_short")},
		{Name: "q of blanks is too short", Key: key, Path: "/email-threads?q=%20%20", Status: 422,
			Check: apitest.FieldErrors("q:too_short")},
		{Name: "bad filters all listed", Key: key, Path: "/email-threads?contactId=x&leadId=y&mailboxId=z&updatedSince=gestern",
			Status: 422, Check: apitest.FieldErrorSet("contactId:invalid_uuid", "leadId:invalid_uuid", "mailboxId:invalid_uuid",
				"updatedSince:invalid_datetime")},
		{Name: "another company sees none of them", Key: b.Secret, Path: "/email-threads", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[threadView]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("company B lists %d threads of A", len(p.Data))
				}
			}},
		{Name: "another company filtering by A's mailbox sees nothing", Key: b.Secret,
			Path: "/email-threads?mailboxId=" + mb.String(), Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[threadView]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("company B lists %d threads", len(p.Data))
				}
			}},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "contacts:read"), Path: "/email-threads", Status: 403,
			Problem: "insufficient_scope"},
		{Name: "no credential", Path: "/email-threads", Status: 401},
		{Name: "feature emails missing", Key: env.NewCompany(t, "marketing").Secret, Path: "/email-threads", Status: 403,
			Problem: "feature_not_licensed"},
	})
}

// TestEmailThreads_Get: the thread with its messages oldest first, in the body variant asked
// for. Catches messages in the wrong order, a body param ignored on the detail, another
// company's thread served.
func TestEmailThreads_Get(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	mb := mailbox(t, env, co, nil)
	base := time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
	html := "<p>Antwort</p>"
	s := thread(t, env, co.ID, mb,
		msg{From: "kunde@example.com", To: "box@makler.test", Subject: "Frage", Text: "Erste", At: base},
		msg{From: "box@makler.test", To: "kunde@example.com", Subject: "Re: Frage", Text: "Zweite", HTML: &html,
			At: base.Add(time.Minute), Direction: "outbound"})
	path := "/email-threads/" + s.Thread.String()
	key := co.KeyWithScopes(t, "emails:read")

	got := apitest.Get[threadView](t, env, key, path)
	if got.ID != s.Thread.String() || got.MessageCount != 2 || len(got.Messages) != 2 {
		t.Fatalf("thread %+v", got)
	}
	if got.Messages[0].ID != s.Emails[0].String() || got.Messages[1].ID != s.Emails[1].String() {
		t.Errorf("messages not oldest first: %s, %s", got.Messages[0].ID, got.Messages[1].ID)
	}
	if got.Messages[0].Text == nil || *got.Messages[0].Text != "Erste" || got.Messages[1].HTML != nil {
		t.Errorf("default variant is not text: %+v", got.Messages)
	}
	if len(got.Messages[0].Bcc) != 0 || len(got.Messages[1].Bcc) != 1 {
		t.Errorf("bcc shown on inbound or hidden on outbound: %+v", got.Messages)
	}
	h := apitest.Get[threadView](t, env, key, path+"?body=html")
	if h.Messages[1].HTML == nil || *h.Messages[1].HTML != html || h.Messages[1].Text != nil || h.Messages[0].HTML != nil {
		t.Errorf("?body=html: %+v", h.Messages)
	}
	env.Run(t, []apitest.Case{
		{Name: "invalid body variant", Key: key, Path: path + "?body=raw", Status: 422, Check: apitest.FieldErrors("body:invalid_enum")},
		{Name: "malformed id", Key: key, Path: "/email-threads/nope", Status: 400},
		{Name: "unknown id", Key: key, Path: "/email-threads/" + uuid.NewString(), Status: 404},
		{Name: "other company gets 404", Key: b.Secret, Path: path, Status: 404},
		{Name: "sandbox key gets 404", Key: co.TestSecret, Path: path, Status: 404},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "marketing:read"), Path: path, Status: 403, Problem: "insufficient_scope"},
	})
}

// TestEmails_Get: the body variants none, text, html, the ETag, and the errors. Catches a
// variant that leaks the other body, a default other than text, an invalid variant accepted.
func TestEmails_Get(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	mb := mailbox(t, env, co, nil)
	kai := contact(t, env, co.ID, nil)
	html := "<p>Hallo <b>Kai</b></p>"
	s := thread(t, env, co.ID, mb, msg{From: "kunde@example.com", To: "box@makler.test", Subject: "Hallo", Text: "Hallo Kai",
		HTML: &html, At: time.Now(), Contacts: []uuid.UUID{kai},
		Files: []file{{Name: "Police.pdf", Type: "application/pdf", Content: []byte("%PDF-1.4 police")}}})
	path := "/emails/" + s.Emails[0].String()
	key := co.KeyWithScopes(t, "emails:read")

	for _, tc := range []struct {
		query      string
		text, html *string
	}{
		{"", ptr("Hallo Kai"), nil},
		{"?body=text", ptr("Hallo Kai"), nil},
		{"?body=html", nil, &html},
		{"?body=none", nil, nil},
	} {
		r := env.Do(t, apitest.Request{Path: path + tc.query, Key: key})
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path+tc.query, r.Status, r.Body)
		}
		if r.Header.Get("ETag") == "" {
			t.Errorf("GET %s: no ETag", path+tc.query)
		}
		var e email
		r.Decode(t, &e)
		if !same(e.Text, tc.text) || !same(e.HTML, tc.html) {
			t.Errorf("GET %s: text %v html %v, want %v %v", path+tc.query, deref(e.Text), deref(e.HTML), deref(tc.text), deref(tc.html))
		}
		if len(e.Attachments) != 1 || e.Attachments[0].Filename != "Police.pdf" || len(e.ContactIDs) != 1 || e.ContactIDs[0] != kai.String() {
			t.Errorf("GET %s: attachments %+v contacts %v", path+tc.query, e.Attachments, e.ContactIDs)
		}
	}
	env.Run(t, []apitest.Case{
		{Name: "invalid body variant", Key: key, Path: path + "?body=full", Status: 422, Check: apitest.FieldErrors("body:invalid_enum")},
		{Name: "invalid variant before unknown id", Key: key, Path: "/emails/" + uuid.NewString() + "?body=full", Status: 422},
		{Name: "malformed id", Key: key, Path: "/emails/123", Status: 400},
		{Name: "unknown id", Key: key, Path: "/emails/" + uuid.NewString(), Status: 404},
		{Name: "other company gets 404", Key: b.Secret, Path: path, Status: 404},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "contacts:read"), Path: path, Status: 403, Problem: "insufficient_scope"},
		{Name: "feature emails missing", Key: env.NewCompany(t, "leads").Secret, Path: path, Status: 403, Problem: "feature_not_licensed"},
	})
}

// TestEmails_AttachmentContent: a download with our sniffed type, attachment disposition and
// nosniff; active content never served as itself; an attachment of another message is 404.
// Catches the sender's Content-Type passed through, an inline disposition, a lookup of the
// attachment by its id alone.
func TestEmails_AttachmentContent(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, b := newCompany(t, env), newCompany(t, env)
	mb := mailbox(t, env, co, nil)
	pdf := []byte("%PDF-1.4 Versicherungsschein")
	s := thread(t, env, co.ID, mb,
		msg{From: "kunde@example.com", To: "box@makler.test", Subject: "Unterlagen", Text: "anbei", At: time.Now().Add(-time.Hour),
			Files: []file{{Name: "Übersicht März.pdf", Type: "application/pdf", Content: pdf},
				{Name: "rechnung.html", Type: "text/html; charset=utf-8", Content: []byte("<script>alert(1)</script>")}}},
		msg{From: "kunde@example.com", To: "box@makler.test", Subject: "Re: Unterlagen", Text: "noch eins", At: time.Now(),
			Files: []file{{Name: "foto.png", Type: "image/png", Content: []byte("\x89PNG\r\n\x1a\nrest")}}})
	content := func(e, a uuid.UUID) string {
		return "/emails/" + e.String() + "/attachments/" + a.String() + "/content"
	}
	key := co.KeyWithScopes(t, "emails:read")

	r := env.Do(t, apitest.Request{Path: content(s.Emails[0], s.Attachments[0][0]), Key: key})
	if r.Status != 200 || string(r.Body) != string(pdf) {
		t.Fatalf("download: %d %q", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q, want application/pdf", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, `attachment; filename="Uebersicht Maerz.pdf"; filename*=UTF-8''`) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", r.Header.Get("X-Content-Type-Options"))
	}
	r = env.Do(t, apitest.Request{Path: content(s.Emails[0], s.Attachments[0][1]), Key: key})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/octet-stream" ||
		!strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment;") {
		t.Errorf("HTML attachment: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Content-Disposition"))
	}
	// Bytes in storage that are not what was stored (sha256 recorded at sync) are never served.
	ctx := context.Background()
	err := env.Operator(ctx, co.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE email_attachments SET sha256 = repeat('0', 64) WHERE id = $1`, s.Attachments[1][0])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	env.Run(t, []apitest.Case{
		{Name: "altered content is 502", Key: key, Path: content(s.Emails[1], s.Attachments[1][0]), Status: 502, Problem: "content_corrupted"},
		{Name: "attachment of another e-mail of the same thread is 404", Key: key, Path: content(s.Emails[0], s.Attachments[1][0]), Status: 404},
		{Name: "unknown attachment", Key: key, Path: content(s.Emails[0], uuid.New()), Status: 404},
		{Name: "unknown e-mail", Key: key, Path: content(uuid.New(), s.Attachments[0][0]), Status: 404},
		{Name: "malformed attachment id", Key: key, Path: "/emails/" + s.Emails[0].String() + "/attachments/x/content", Status: 400},
		{Name: "other company gets 404", Key: b.Secret, Path: content(s.Emails[0], s.Attachments[0][0]), Status: 404},
		{Name: "scope missing", Key: co.KeyWithScopes(t, "documents:read"), Path: content(s.Emails[0], s.Attachments[0][0]), Status: 403,
			Problem: "insufficient_scope"},
	})
}

// TestEmails_Visibility: an agent sees threads of shared mailboxes and its own, not another
// agent's personal mailbox, until a message of it is linked to a contact the agent may see;
// a delegate sees the delegator's; a manager sees everything. Catches a thread rule that
// forgets the links, or one that shows every personal mailbox.
func TestEmails_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := newCompany(t, env)
	anna, ben, carl := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	boss := env.NewUser(t, co, "manager")
	co.Delegate(t, ben.ID, carl.ID, nil) // carl sees what ben owns
	shared, bens := mailbox(t, env, co, nil), mailbox(t, env, co, &ben.ID)
	now := time.Now()
	sharedT := thread(t, env, co.ID, shared, msg{From: "a@example.com", To: "team@makler.test", Subject: "Team", Text: "x", At: now})
	bensT := thread(t, env, co.ID, bens, msg{From: "b@example.com", To: "ben@makler.test", Subject: "Privat", Text: "y", At: now,
		Files: []file{{Name: "a.txt", Type: "text/plain", Content: []byte("abc")}}})
	keys := map[string]string{}
	keys["anna"] = co.UserKey(t, anna, "emails:read")
	keys["ben"] = co.UserKey(t, ben, "emails:read")
	keys["carl"] = co.UserKey(t, carl, "emails:read")
	keys["boss"] = co.UserKey(t, boss, "emails:read")
	keys["company"] = co.KeyWithScopes(t, "emails:read")

	check := func(t *testing.T, who string, wantShared, wantBens bool) {
		t.Helper()
		ids := threads(t, env, keys[who], "limit=200")
		if slices.Contains(ids, sharedT.Thread.String()) != wantShared || slices.Contains(ids, bensT.Thread.String()) != wantBens {
			t.Errorf("%s lists %v; want shared %v, ben's %v", who, ids, wantShared, wantBens)
		}
		status := map[bool]int{true: 200, false: 404}
		for path, want := range map[string]int{
			"/email-threads/" + bensT.Thread.String(): status[wantBens],
			"/emails/" + bensT.Emails[0].String():     status[wantBens],
			"/emails/" + bensT.Emails[0].String() + "/attachments/" + bensT.Attachments[0][0].String() + "/content": status[wantBens],
			"/email-threads/" + sharedT.Thread.String():                                                             status[wantShared],
		} {
			if r := env.Do(t, apitest.Request{Path: path, Key: keys[who]}); r.Status != want {
				t.Errorf("%s GET %s: %d, want %d", who, path, r.Status, want)
			}
		}
	}
	t.Run("before a link", func(t *testing.T) {
		check(t, "anna", true, false) // ben's personal mailbox is not hers
		check(t, "ben", true, true)
		check(t, "carl", true, true) // delegated
		check(t, "boss", true, true)
		check(t, "company", true, true)
	})
	annas := contact(t, env, co.ID, &anna.ID)
	link(t, env, co.ID, bensT, annas)
	t.Run("linked to anna's contact", func(t *testing.T) {
		check(t, "anna", true, true)
		ids := threads(t, env, keys["anna"], "contactId="+annas.String())
		if !slices.Equal(ids, []string{bensT.Thread.String()}) {
			t.Errorf("anna ?contactId: %v", ids)
		}
		// Ben sees the thread through his mailbox but not anna's contact: the link is not shown.
		th := apitest.Get[threadView](t, env, keys["ben"], "/email-threads/"+bensT.Thread.String())
		if len(th.ContactIDs) != 0 || len(th.Messages[0].ContactIDs) != 0 {
			t.Errorf("ben sees the link to anna's contact: %v %v", th.ContactIDs, th.Messages[0].ContactIDs)
		}
		if ids := threads(t, env, keys["ben"], "contactId="+annas.String()); len(ids) != 0 {
			t.Errorf("ben finds the thread by a contact he may not see: %v", ids)
		}
	})
}

func ptr(s string) *string { return &s }

func same(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
