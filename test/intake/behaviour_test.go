package intake

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// latin1 encodes s (Latin-1 characters only) as ISO-8859-1 bytes.
func latin1(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

// TestIntake_Umlauts: "Jürgen Müller-Lüdenscheidt" arrives intact through every content type
// and every way a form can be encoded.
func TestIntake_Umlauts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	const first, last, notes = "Jürgen", "Müller-Lüdenscheidt", "Größe: €5 – „gut“"
	type variant struct {
		name  string
		ct    string
		body  func(email string) []byte
		notes string // what notes must read (Latin-1 cannot carry all of it)
	}
	utf := func(s string) string { return s }
	urlenc := func(enc func(string) string, notes string, extra ...string) func(string) []byte {
		return func(email string) []byte {
			parts := []string{"firstName=" + url.QueryEscape(enc(first)), "lastName=" + url.QueryEscape(enc(last)),
				"email=" + url.QueryEscape(email), "notes=" + url.QueryEscape(enc(notes))}
			return []byte(strings.Join(append(parts, extra...), "&"))
		}
	}
	cp1252Notes := latin1("Größe: ") + "\x80 \x84gut\x93" // € „ “ in Windows-1252
	variants := []variant{
		{"JSON", "application/json", func(email string) []byte {
			return f("firstName", first, "lastName", last, "email", email, "notes", notes).jsonBody()
		}, notes},
		{"JSON with escapes", "application/json", func(email string) []byte {
			return []byte(`{"firstName":"J\u00fcrgen","lastName":"M\u00fcller-L\u00fcdenscheidt","email":"` + email + `","notes":"Gr\u00f6\u00dfe: \u20ac5 \u2013 \u201egut\u201c"}`)
		}, notes},
		{"urlencoded UTF-8 unlabelled", "application/x-www-form-urlencoded", urlenc(utf, notes), notes},
		{"urlencoded charset=UTF-8", "application/x-www-form-urlencoded; charset=UTF-8", urlenc(utf, notes), notes},
		{"urlencoded charset=ISO-8859-1", "application/x-www-form-urlencoded; charset=ISO-8859-1", urlenc(latin1, "Größe"), "Größe"},
		{"urlencoded Latin-1 unlabelled", "application/x-www-form-urlencoded", urlenc(latin1, "Größe"), "Größe"},
		{"urlencoded _charset_=windows-1252", "application/x-www-form-urlencoded",
			func(email string) []byte {
				return []byte("_charset_=windows-1252&" + string(urlenc(latin1, "")(email)) + url.QueryEscape(cp1252Notes))
			}, "Größe: € „gut“"},
		{"multipart UTF-8", "", nil, notes},
		{"multipart Latin-1 with _charset_", "", nil, "Größe"},
		{"multipart Latin-1 unlabelled", "", nil, "Größe"},
	}
	for _, path := range paths {
		for _, v := range variants {
			email := uniqueEmail("umlaut")
			ct, body := v.ct, []byte(nil)
			switch v.name {
			case "multipart UTF-8":
				ct, body = f("firstName", first, "lastName", last, "email", email, "notes", notes).multipartBody()
			case "multipart Latin-1 with _charset_":
				ct, body = f("_charset_", "ISO-8859-1", "firstName", latin1(first), "lastName", latin1(last), "email", email,
					"notes", latin1("Größe")).multipartBody()
			case "multipart Latin-1 unlabelled":
				ct, body = f("firstName", latin1(first), "lastName", latin1(last), "email", email, "notes", latin1("Größe")).multipartBody()
			default:
				body = v.body(email)
			}
			r := send(t, env, post{path: path, ct: ct, raw: body, key: key})
			if r.Status != 201 {
				t.Errorf("%s %s: %d %s", path, v.name, r.Status, r.Body)
				continue
			}
			l := leadByEmail(t, env, co.ID, email)
			if l.FirstName != first || l.LastName != last || l.Notes != v.notes {
				t.Errorf("%s %s: stored %q %q notes %q, want %q %q %q", path, v.name, l.FirstName, l.LastName, l.Notes, first, last, v.notes)
			}
		}
	}
	// A name in Latin-1 over the limit counts characters, not bytes; in UTF-8 the same.
	r := send(t, env, post{path: legacyPath, ct: "application/x-www-form-urlencoded; charset=ISO-8859-1",
		raw: []byte("firstName=" + url.QueryEscape(latin1(strings.Repeat("ü", 101))) + "&lastName=M&email=" + uniqueEmail("x")), key: key, lang: "en"})
	if b := decodeLegacy(t, r.Body); r.Status != 400 || len(b.Violations) != 1 || b.Violations[0].Message != "First name must be at most 100 characters" {
		t.Errorf("101 Latin-1 characters: %d %s", r.Status, r.Body)
	}
}

// TestIntake_Duplicates: a submission matching an open lead by e-mail or phone updates it as the
// company's lead rules say; converted leads, test leads and other companies stay apart.
func TestIntake_Duplicates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	stageNew := stageID(t, env, co.ID, "new")
	email := uniqueEmail("ada")
	submit := func(path string, fs fields, kind string) string {
		t.Helper()
		r := send(t, env, post{path: path, kind: kind, fields: fs, key: key})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if path == v1Path {
			var b struct{ Status string }
			r.Decode(t, &b)
			return b.Status
		}
		return "legacy"
	}

	if got := submit(v1Path, f("firstName", "Ada", "lastName", "Lovelace", "email", email, "source", "website",
		"notes", "first note", "additionalFields.interest", "BU", "additionalFields.callback", "morgens",
		"_meta.url", "https://www.example.com/a"), asJSON); got != "created" {
		t.Fatalf("first submission: %s", got)
	}
	l := leadByEmail(t, env, co.ID, email)
	if l.StageID != stageNew || l.OwnerID == nil || *l.OwnerID != co.Admin.ID || l.Submissions != 1 || l.Notes != "first note" ||
		l.Source == nil || *l.Source != "website" || l.MetaURL == nil || *l.MetaURL != "https://www.example.com/a" {
		t.Fatalf("new lead %+v", l)
	}

	// Same person, e-mail differently written: filled, appended, counted; an additional field the
	// lead has keeps its value (the submission record keeps the new one), new ones are added.
	if got := submit(v1Path, f("firstName", "Augusta", "lastName", "King", "email", "  "+strings.ToUpper(email)+" ",
		"phone", "0170 7654321", "source", "referral", "notes", "second note", "additionalFields.interest", "KV",
		"additionalFields.budget", "100", "additionalFields.callback", "", "_meta.url", "https://www.example.com/b"), asForm); got != "updated" {
		t.Fatalf("second submission: %s", got)
	}
	l2 := leadByEmail(t, env, co.ID, email)
	if l2.ID != l.ID || l2.FirstName != "Ada" || l2.LastName != "Lovelace" || *l2.Email != email || l2.Phone == nil ||
		*l2.Phone != "0170 7654321" || *l2.PhoneKey != "+491707654321" || *l2.Source != "website" || *l2.MetaURL != "https://www.example.com/a" ||
		l2.Submissions != 2 {
		t.Errorf("merged lead %+v", l2)
	}
	if want := map[string]string{"interest": "BU", "budget": "100", "callback": "morgens"}; fmt.Sprint(l2.AdditionalFields) != fmt.Sprint(want) {
		t.Errorf("additionalFields %v, want %v", l2.AdditionalFields, want)
	}
	stamp := regexp.MustCompile(`^first note\n\n--- \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d ---\nsecond note$`)
	if !stamp.MatchString(l2.Notes) {
		t.Errorf("notes %q", l2.Notes)
	}

	// By phone, written differently, without e-mail, the same names in other case; over
	// multipart, legacy.
	submit(legacyPath, f("firstName", "ADA", "lastName", " lovelace", "phone", "+49 170 765 43 21", "notes", "third note"), asMultipart)
	l3 := leadByEmail(t, env, co.ID, email)
	if l3.Submissions != 3 || !strings.HasSuffix(l3.Notes, "\nthird note") {
		t.Errorf("phone match: %+v", l3)
	}
	if n := len(leadsOf(t, env, co.ID)); n != 1 {
		t.Fatalf("%d leads, want 1", n)
	}
	subs := submissionsOf(t, env, co.ID, l.ID)
	if len(subs) != 3 || subs[0].Outcome != "created" || subs[1].Outcome != "updated" || subs[2].Outcome != "updated" ||
		subs[0].Channel != "intake" || subs[2].Channel != "legacy" || subs[1].Payload["notes"] != "second note" ||
		fmt.Sprint(subs[1].Payload["additionalFields"]) != fmt.Sprint(map[string]any{"interest": "KV", "budget": "100", "callback": ""}) {
		t.Errorf("submissions %+v", subs)
	}
	evs := eventsOf(t, env, co.ID)
	if len(evs) != 3 || evs[0].Type != "lead.created" || evs[1].Type != "lead.updated" || evs[2].Type != "lead.updated" ||
		evs[2].Data["id"] != l.ID.String() || evs[2].Data["submissions"] != float64(3) || evs[0].Data["firstName"] != "Ada" {
		t.Errorf("events %+v", evs)
	}

	// A test submission does not merge into a live lead, nor a live one into a test lead.
	if got := submit(v1Path, f("firstName", "T", "lastName", "T", "email", email, "_test", "true"), asJSON); got != "created" {
		t.Errorf("test submission: %s, want created", got)
	}
	if got := submit(v1Path, f("firstName", "T", "lastName", "T", "email", email, "_test", "1"), asForm); got != "updated" {
		t.Errorf("second test submission: %s, want updated", got)
	}
	// A converted lead is closed: the next submission opens a new one.
	pinned(t, env, co.ID, func(tx *sql.Tx) {
		if _, err := tx.Exec("UPDATE leads SET converted = true, converted_at = now() WHERE id = $1", l.ID); err != nil {
			t.Fatal(err)
		}
	})
	if got := submit(v1Path, f("firstName", "Ada", "lastName", "Lovelace", "email", email), asJSON); got != "created" {
		t.Errorf("after conversion: %s, want created", got)
	}
	if n := len(leadsOf(t, env, co.ID)); n != 3 {
		t.Errorf("%d leads, want 3 (converted, test, new)", n)
	}
}

// TestIntake_LeadRules: the company's lead rules decide which keys match.
func TestIntake_LeadRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, c := range []struct {
		rules                string
		sameEmail, samePhone string // outcome of a second submission sharing only that key
	}{
		{`{"matchEmail":true,"matchPhone":true}`, "updated", "updated"},
		{`{"matchEmail":false,"matchPhone":true}`, "created", "updated"},
		{`{"matchEmail":true,"matchPhone":false}`, "updated", "created"},
		{`{"matchEmail":false,"matchPhone":false}`, "created", "created"},
	} {
		co := env.NewCompany(t)
		asOperator(t, env, func(tx *sql.Tx) error {
			_, err := tx.Exec("UPDATE companies SET lead_rules = $1 WHERE id = $2", c.rules, co.ID)
			return err
		})
		key := pk(t, co)
		email, phone := uniqueEmail("rules"), "+49 30 1234567"
		status := func(fs fields) string {
			r := send(t, env, post{path: v1Path, kind: asJSON, fields: fs, key: key})
			var b struct{ Status string }
			r.Decode(t, &b)
			return b.Status
		}
		status(f("firstName", "A", "lastName", "B", "email", email, "phone", phone))
		if got := status(f("firstName", "A", "lastName", "B", "email", email)); got != c.sameEmail {
			t.Errorf("%s: same e-mail %s, want %s", c.rules, got, c.sameEmail)
		}
		if got := status(f("firstName", "A", "lastName", "B", "phone", "030 1234567")); got != c.samePhone {
			t.Errorf("%s: same phone %s, want %s", c.rules, got, c.samePhone)
		}
	}
}

// TestIntake_ConcurrentDuplicates: 20 submissions of one person at once make one lead with
// every note and every submission (1 created, 19 updated).
func TestIntake_ConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	email := uniqueEmail("burst")
	const n = 20
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			fs := f("firstName", "Jürgen", "lastName", "Müller-Lüdenscheidt", "email", email, "phone", "0171 5550000",
				"notes", fmt.Sprintf("note %02d", i))
			path, kind := v1Path, kinds[i%3]
			r := send(t, env, post{path: path, kind: kind, fields: fs, key: key})
			var b struct{ Status string }
			_ = json.Unmarshal(r.Body, &b)
			mu.Lock()
			outcomes[fmt.Sprint(r.Status, " ", b.Status)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if outcomes["201 created"] != 1 || outcomes["201 updated"] != n-1 {
		t.Fatalf("outcomes %v, want 1 created and %d updated", outcomes, n-1)
	}
	ls := leadsOf(t, env, co.ID)
	if len(ls) != 1 {
		t.Fatalf("%d leads, want 1", len(ls))
	}
	l := ls[0]
	for i := range n {
		if c := strings.Count(l.Notes, fmt.Sprintf("note %02d", i)); c != 1 {
			t.Errorf("note %02d appears %d times", i, c)
		}
	}
	if l.Submissions != n || len(submissionsOf(t, env, co.ID, l.ID)) != n {
		t.Errorf("submissions %d / %d rows, want %d", l.Submissions, len(submissionsOf(t, env, co.ID, l.ID)), n)
	}
	if evs := eventsOf(t, env, co.ID); len(evs) != n {
		t.Errorf("%d events, want %d", len(evs), n)
	}
}

// TestIntake_Isolation: a key of company A only ever touches A's leads, and the same person at B
// stays B's own lead.
func TestIntake_Isolation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	email := uniqueEmail("shared")
	for i, c := range []*apitest.Company{b, a, a, b, a} {
		r := send(t, env, post{path: paths[i%2], kind: kinds[i%3], fields: valid(email).with("notes", c.ID.String()), key: c.Publishable})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	la, lb := leadByEmail(t, env, a.ID, email), leadByEmail(t, env, b.ID, email)
	if la.ID == lb.ID || la.Submissions != 3 || lb.Submissions != 2 {
		t.Errorf("A %+v\nB %+v", la, lb)
	}
	if strings.Contains(la.Notes, b.ID.String()) || strings.Contains(lb.Notes, a.ID.String()) {
		t.Errorf("notes crossed companies: A %q B %q", la.Notes, lb.Notes)
	}
	if n := countOf(t, env, a.ID, "SELECT count(*) FROM lead_submissions"); n != 3 {
		t.Errorf("A sees %d submissions, want 3", n)
	}
	if n := countOf(t, env, b.ID, "SELECT count(*) FROM events WHERE type LIKE 'lead.%'"); n != 2 {
		t.Errorf("B has %d lead events, want 2", n)
	}
}

// TestIntake_Sandbox: a pk_test_ key fills the sandbox twin's board, never the live one.
func TestIntake_Sandbox(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	testKey := co.Key(t, operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvTest,
		UserID: &co.Admin.ID, AllowedDomains: []string{"example.com"}}).Secret
	if !strings.HasPrefix(testKey, "pk_test_") {
		t.Fatalf("key %s", testKey)
	}
	email := uniqueEmail("sandbox")
	for _, path := range paths {
		if r := send(t, env, post{path: path, kind: asJSON, fields: valid(email), key: testKey}); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	sb := leadByEmail(t, env, co.SandboxID, email)
	if sb.Submissions != 2 || sb.StageID != stageID(t, env, co.SandboxID, "new") || sb.OwnerID == nil || *sb.OwnerID != co.Admin.SandboxID {
		t.Errorf("sandbox lead %+v", sb)
	}
	if n := len(leadsOf(t, env, co.ID)); n != 0 {
		t.Errorf("live company has %d leads", n)
	}
	if r := send(t, env, post{path: v1Path, kind: asJSON, fields: valid(email), key: co.Publishable}); string(r.Body) != `{"status":"created"}` {
		t.Errorf("live key after sandbox: %s", r.Body)
	}
}

// TestIntake_Redirect: _redirect to an allowed domain answers 302 (new lead and merge alike);
// anything else is a field error and nothing is stored.
func TestIntake_Redirect(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com", "makler-muster.de")
	for _, path := range paths {
		for _, target := range []string{"https://example.com/danke", "https://www.example.com/danke?from=form#top",
			"http://makler-muster.de:8080/danke", "https://a.b.makler-muster.de/", "HTTPS://WWW.EXAMPLE.COM/Danke"} {
			email := uniqueEmail("redirect")
			for _, kind := range kinds {
				r := send(t, env, post{path: path, kind: kind, fields: valid(email).with("_redirect", target), key: key})
				if r.Status != 302 || !strings.EqualFold(r.Header.Get("Location"), target) || len(r.Body) != 0 {
					t.Errorf("%s %s %s: %d Location %q body %q", path, kind, target, r.Status, r.Header.Get("Location"), r.Body)
				}
			}
			if l := leadByEmail(t, env, co.ID, email); l.Submissions != 3 {
				t.Errorf("%s: %d submissions, want 3 (created then merged, each redirected)", target, l.Submissions)
			}
		}
	}
	bad := []string{"https://evil.example/danke", "//evil.example/danke", "/danke", "danke.html",
		"http://127.0.0.1:8082@evil.example/", "https://user:pw@example.com/", "https://example.com.evil.example/",
		"https://evilexample.com/", "javascript:alert(1)", "ftp://example.com/", "https://exämple.com/",
		"https://xn--exmple-cua.com/", "https:example.com", "https://example.com\\@evil.example/", "https://example .com/",
		"https://example.com/\r\nSet-Cookie: x=1", "data:text/html,hi", "https://" + strings.Repeat("a", 2040) + ".example.com/"}
	for _, path := range paths {
		for _, target := range bad {
			email := uniqueEmail("badredirect")
			r := send(t, env, post{path: path, kind: asForm, fields: valid(email).with("_redirect", target), key: key, lang: "en"})
			if r.Header.Get("Location") != "" {
				t.Errorf("%s %q: Location %q", path, target, r.Header.Get("Location"))
			}
			want := 400
			if path == v1Path {
				want = 422
			}
			if r.Status != want || !strings.Contains(string(r.Body), "_redirect") {
				t.Errorf("%s %q: %d %s", path, target, r.Status, r.Body)
			}
			if n := countOf(t, env, co.ID, "SELECT count(*) FROM leads WHERE email_key = $1", email); n != 0 {
				t.Errorf("%q: lead stored", target)
			}
		}
	}
	// A key without allowed domains redirects nowhere.
	noDomains := pk(t, co)
	r := send(t, env, post{path: legacyPath, kind: asForm, fields: valid(uniqueEmail("x")).with("_redirect", "https://example.com/"), key: noDomains})
	if r.Status != 400 {
		t.Errorf("key without domains: %d %s", r.Status, r.Body)
	}
}

// TestIntake_CORS: preflights for any origin; the actual POST is refused (403, not counted)
// from an origin outside the key's allowed domains.
func TestIntake_CORS(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	for _, path := range paths {
		r := env.Do(t, apitest.Request{Method: "OPTIONS", Path: path, Header: map[string]string{
			"Origin": "https://anywhere.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers": "content-type,x-api-key"}})
		h := r.Header
		if r.Status != 204 || h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "X-API-Key") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
			h.Get("Access-Control-Allow-Credentials") != "" || len(r.Body) != 0 {
			t.Errorf("%s preflight: %d %v %q", path, r.Status, h, r.Body)
		}
	}
	key := pk(t, co, "example.com")
	open := pk(t, co)
	for _, path := range paths {
		remaining := func(r *apitest.Response) string { return r.Header.Get("RateLimit-Remaining") }
		ok := func(origin, k string) *apitest.Response {
			t.Helper()
			r := send(t, env, post{path: path, kind: asJSON, fields: valid(uniqueEmail("cors")), key: k, origin: origin})
			if r.Status != 201 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Allow-Credentials") != "" ||
				!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
				t.Errorf("%s from %q: %d %v %s", path, origin, r.Status, r.Header, r.Body)
			}
			return r
		}
		first := ok("https://www.example.com", key)
		ok("http://example.com:8080", key)
		ok("", key)
		for _, origin := range []string{"https://evil.example", "null", "https://example.com.evil.example", "https://notexample.com", "file://"} {
			r := send(t, env, post{path: path, kind: asJSON, fields: valid(uniqueEmail("cors")), key: key, origin: origin, lang: "en"})
			if r.Status != 403 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("RateLimit-Remaining") != "" {
				t.Errorf("%s from %q: %d %v %s", path, origin, r.Status, r.Header, r.Body)
				continue
			}
			if path == legacyPath && string(r.Body) != `{"error":"Origin not allowed"}` {
				t.Errorf("%s from %q: %s", path, origin, r.Body)
			}
			if path == v1Path && r.Problem(t).Code != "origin_not_allowed" {
				t.Errorf("%s from %q: %s", path, origin, r.Body)
			}
		}
		last := ok("https://example.com", key)
		if first.Header.Get("RateLimit-Remaining") == "" || remaining(last) == "" {
			t.Fatalf("no RateLimit-Remaining")
		}
		var a, b int
		fmt.Sscan(remaining(first), &a)
		fmt.Sscan(remaining(last), &b)
		if a-b != 3 {
			t.Errorf("%s: remaining %d then %d: refused origins were counted", path, a, b)
		}
		ok("https://evil.example", open) // a key without domains accepts every origin
	}
}

// TestIntake_Files: multipart files become attachments as sent; too many or too large files
// are field errors and nothing is stored.
func TestIntake_Files(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	pdf := append([]byte("%PDF-1.4\n% J\xc3\xbcrgen\n"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)...)
	png := []byte("\x89PNG\r\n\x1a\nrest")
	for _, path := range paths {
		key := pk(t, co, "example.com")
		email := uniqueEmail("files")
		r := send(t, env, post{path: path, kind: asMultipart, fields: valid(email), key: key, files: []upload{
			{"document", "Gehaltsnachweis März.pdf", "application/pdf", pdf},
			{"photo", `C:\fakepath\foto.png`, "image/png", png},
			{"empty", "", "application/octet-stream", nil}, // an empty file input
		}})
		if r.Status != 201 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		l := leadByEmail(t, env, co.ID, email)
		atts := attachmentsOf(t, env, co.ID, l.ID)
		if len(atts) != 2 || atts[0].Filename != "Gehaltsnachweis März.pdf" || atts[0].ContentType != "application/pdf" ||
			!bytes.Equal(atts[0].Content, pdf) || atts[0].Size != int64(len(pdf)) ||
			atts[1].Filename != "foto.png" || atts[1].ContentType != "image/png" || !bytes.Equal(atts[1].Content, png) {
			t.Errorf("%s: attachments %+v", path, atts)
		}
		evs := eventsOf(t, env, co.ID)
		if last := evs[len(evs)-1]; len(last.Data["attachments"].([]any)) != 2 {
			t.Errorf("%s: event attachments %v", path, last.Data["attachments"])
		}
		// A duplicate adds its file to the lead.
		r = send(t, env, post{path: path, kind: asMultipart, fields: valid(email), key: key, files: []upload{
			{"document", "zweites.txt", "", []byte("hallo")}}})
		if r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		// The stored type is sniffed from the bytes, whatever the part claimed (here: nothing).
		if atts := attachmentsOf(t, env, co.ID, l.ID); len(atts) != 3 || atts[2].ContentType != "text/plain; charset=utf-8" {
			t.Errorf("after merge %+v", atts)
		}

		// Six files, or one over 5 MB: a field error, nothing stored.
		var six []upload
		for i := range 6 {
			six = append(six, upload{"files", fmt.Sprintf("f%d.txt", i), "text/plain", []byte("x")})
		}
		big := []upload{{"document", "big.bin", "application/octet-stream", make([]byte, 5<<20+1)}}
		exact := []upload{{"document", "exact.bin", "application/octet-stream", make([]byte, 5<<20)}}
		for name, c := range map[string]struct {
			files      []upload
			code, msg  string
			wantStored bool
		}{
			"six files":        {six, "too_many_files", "At most 5 files are allowed", false},
			"a file over 5 MB": {big, "file_too_large", "The file is larger than 5 MB", false},
			"a file of 5 MB":   {exact, "", "", true},
		} {
			email := uniqueEmail("toomany")
			r := send(t, env, post{path: path, kind: asMultipart, fields: valid(email), key: key, files: c.files, lang: "en"})
			stored := countOf(t, env, co.ID, "SELECT count(*) FROM leads WHERE email_key = $1", email) == 1
			if stored != c.wantStored {
				t.Errorf("%s %s: stored %v (%d %s)", path, name, stored, r.Status, r.Body)
			}
			if c.wantStored {
				continue
			}
			field := c.files[0].field
			if path == legacyPath {
				b := decodeLegacy(t, r.Body)
				if r.Status != 400 || len(b.Violations) != 1 || b.Violations[0].Field != field || b.Violations[0].Message != c.msg {
					t.Errorf("%s %s: %d %s", path, name, r.Status, r.Body)
				}
			} else if p := r.Problem(t); r.Status != 422 || len(p.Errors) != 1 || p.Errors[0].Code != c.code || p.Errors[0].Field != field {
				t.Errorf("%s %s: %d %s", path, name, r.Status, r.Body)
			}
		}
	}
}

// stageID is the id of the company's stage with key.
func stageID(t testing.TB, env *apitest.Env, company uuid.UUID, key string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	pinned(t, env, company, func(tx *sql.Tx) {
		if err := tx.QueryRow("SELECT id FROM lead_stages WHERE key = $1", key).Scan(&id); err != nil {
			t.Fatal(err)
		}
	})
	return id
}

type submissionRow struct {
	Outcome, Channel string
	Payload          map[string]any
}

func submissionsOf(t testing.TB, env *apitest.Env, company, lead uuid.UUID) []submissionRow {
	t.Helper()
	var out []submissionRow
	pinned(t, env, company, func(tx *sql.Tx) {
		rows, err := tx.Query("SELECT outcome, channel, payload FROM lead_submissions WHERE lead_id = $1 ORDER BY received_at, id", lead)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s submissionRow
			var p []byte
			if err := rows.Scan(&s.Outcome, &s.Channel, &p); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(p, &s.Payload); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

type eventRow struct {
	Type string
	Data map[string]any
}

// eventsOf returns the company's lead events in commit order.
func eventsOf(t testing.TB, env *apitest.Env, company uuid.UUID) []eventRow {
	t.Helper()
	var out []eventRow
	pinned(t, env, company, func(tx *sql.Tx) {
		rows, err := tx.Query("SELECT type, data FROM events WHERE type LIKE 'lead.%' ORDER BY seq")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var e eventRow
			var d []byte
			if err := rows.Scan(&e.Type, &d); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(d, &e.Data); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

type attachmentRow struct {
	Filename, ContentType string
	Size                  int64
	Content               []byte
}

func attachmentsOf(t testing.TB, env *apitest.Env, company, lead uuid.UUID) []attachmentRow {
	t.Helper()
	var out []attachmentRow
	pinned(t, env, company, func(tx *sql.Tx) {
		rows, err := tx.Query("SELECT filename, content_type, size, content FROM lead_attachments WHERE lead_id = $1 ORDER BY created_at, filename", lead)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var a attachmentRow
			if err := rows.Scan(&a.Filename, &a.ContentType, &a.Size, &a.Content); err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
	return out
}
