package intake

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// violation is what a rule of lead-intake.md must report, in both languages.
type violation struct{ field, code, en, de string }

// languages: the Accept-Language sent, and the language the answer must be in.
var languages = []struct{ header, want string }{
	{"", "de"}, {"de", "de"}, {"en", "en"}, {"en-US,en;q=0.9", "en"}, {"fr", "de"}, {"de-CH, en;q=0.5", "de"},
}

// TestIntake_ValidationRules: every validation rule, through both endpoints, all three content
// types and both languages; one violation per failing field, nothing stored.
func TestIntake_ValidationRules(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	base := valid("rules@example.com")
	long := func(n int) string { return strings.Repeat("x", n) }

	rules := []struct {
		name   string
		fields fields
		want   []violation
	}{
		{"first name missing", base.without("firstName"),
			[]violation{{"firstName", "required", "First name is required", "Vorname ist erforderlich"}}},
		{"first name blank", base.with("firstName", "   "),
			[]violation{{"firstName", "required", "First name is required", "Vorname ist erforderlich"}}},
		{"last name missing", base.without("lastName"),
			[]violation{{"lastName", "required", "Last name is required", "Nachname ist erforderlich"}}},
		{"first name over 100 characters", base.with("firstName", long(101)),
			[]violation{{"firstName", "too_long", "First name must be at most 100 characters", "Vorname: höchstens 100 Zeichen erlaubt"}}},
		{"last name over 100 characters", base.with("lastName", strings.Repeat("ü", 101)),
			[]violation{{"lastName", "too_long", "Last name must be at most 100 characters", "Nachname: höchstens 100 Zeichen erlaubt"}}},
		{"email not an address", base.with("email", "juergen(at)example.com"),
			[]violation{{"email", "invalid_email", "Email is not valid", "E-Mail ist ungültig"}}},
		{"email with a display name", base.with("email", "Jürgen <juergen@example.com>"),
			[]violation{{"email", "invalid_email", "Email is not valid", "E-Mail ist ungültig"}}},
		{"email without a domain dot", base.with("email", "juergen@localhost"),
			[]violation{{"email", "invalid_email", "Email is not valid", "E-Mail ist ungültig"}}},
		{"email over 255 characters", base.with("email", long(256-len("@example.com"))+"@example.com"),
			[]violation{{"email", "too_long", "Email must be at most 255 characters", "E-Mail: höchstens 255 Zeichen erlaubt"}}},
		{"phone over 50 characters", base.with("phone", strings.Repeat("1", 51)),
			[]violation{{"phone", "too_long", "Phone must be at most 50 characters", "Telefon: höchstens 50 Zeichen erlaubt"}}},
		{"neither email nor phone", base.without("email", "phone"),
			[]violation{{"", "email_or_phone_required", "Email or phone is required", "E-Mail oder Telefon ist erforderlich"}}},
		{"email and phone empty", base.with("email", " ").with("phone", ""),
			[]violation{{"", "email_or_phone_required", "Email or phone is required", "E-Mail oder Telefon ist erforderlich"}}},
		{"notes over 10000 characters", base.with("notes", long(10001)),
			[]violation{{"notes", "too_long", "Notes must be at most 10000 characters", "Notizen: höchstens 10000 Zeichen erlaubt"}}},
		{"additional field over 1000 characters", base.with("additionalFields.interest", long(1001)),
			[]violation{{"additionalFields.interest", "too_long", `Additional field "interest" must be at most 1000 characters`,
				"Zusatzfeld „interest“: höchstens 1000 Zeichen erlaubt"}}},
		{"redirect to another domain", base.with("_redirect", "https://evil.example/danke"),
			[]violation{{"_redirect", "redirect_not_allowed",
				"Redirect target must be an http or https address on an allowed domain of the key",
				"Weiterleitungsziel muss eine http- oder https-Adresse auf einer erlaubten Domain des Schlüssels sein"}}},
		{"every field wrong at once", base.without("firstName", "lastName").with("email", "nope").with("phone", long(51)).with("notes", long(10001)),
			[]violation{
				{"firstName", "required", "First name is required", "Vorname ist erforderlich"},
				{"lastName", "required", "Last name is required", "Nachname ist erforderlich"},
				{"email", "invalid_email", "Email is not valid", "E-Mail ist ungültig"},
				{"phone", "too_long", "Phone must be at most 50 characters", "Telefon: höchstens 50 Zeichen erlaubt"},
				{"notes", "too_long", "Notes must be at most 10000 characters", "Notizen: höchstens 10000 Zeichen erlaubt"},
			}},
	}
	for _, rule := range rules {
		t.Run(rule.name, func(t *testing.T) {
			t.Parallel()
			key := pk(t, co, "example.com") // 36 requests: within one key's hourly 100
			for _, path := range paths {
				for _, kind := range kinds {
					for _, lang := range languages {
						r := send(t, env, post{path: path, kind: kind, fields: rule.fields, key: key, lang: lang.header})
						where := path + " " + kind + " Accept-Language " + lang.header
						checkViolations(t, where, path, r, lang.want, rule.want)
					}
				}
			}
			if n := countOf(t, env, co.ID, "SELECT count(*) FROM leads WHERE email_key = 'rules@example.com'"); n != 0 {
				t.Errorf("%d leads stored for invalid submissions", n)
			}
		})
	}
}

// checkViolations checks an invalid-data answer in the shape of path.
func checkViolations(t *testing.T, where, path string, r *apitest.Response, lang string, want []violation) {
	t.Helper()
	if got := r.Header.Get("Content-Language"); got != lang {
		t.Errorf("%s: Content-Language %q, want %q", where, got, lang)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("%s: no Access-Control-Allow-Origin on the error", where)
	}
	msg := func(v violation) string {
		if lang == "en" {
			return v.en
		}
		return v.de
	}
	if path == legacyPath {
		if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s %s, want 400 application/json", where, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		b := decodeLegacy(t, r.Body)
		if b.Error != "Validation failed" || len(b.Violations) != len(want) {
			t.Fatalf("%s: %s, want %d violations", where, r.Body, len(want))
		}
		for i, v := range want {
			if b.Violations[i].Field != v.field || b.Violations[i].Message != msg(v) {
				t.Errorf("%s: violation %d %+v, want field %q message %q", where, i, b.Violations[i], v.field, msg(v))
			}
		}
		return
	}
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("%s: %d %s, want 422", where, r.Status, r.Body)
	}
	p := r.Problem(t)
	var exp []violation
	for _, v := range want {
		if v.field == "" { // v1 names real fields: the rule is reported on both
			a, b := v, v
			a.field, b.field = "email", "phone"
			exp = append(exp, a, b)
			continue
		}
		exp = append(exp, v)
	}
	if p.Code != "validation_failed" || len(p.Errors) != len(exp) {
		t.Fatalf("%s: %s, want %d errors", where, r.Body, len(exp))
	}
	for i, v := range exp {
		e := p.Errors[i]
		if e.Field != v.field || e.Code != v.code || e.Detail != msg(v) {
			t.Errorf("%s: error %d %+v, want %s %s %q", where, i, e, v.field, v.code, msg(v))
		}
	}
}

// TestIntake_AcceptedSubmissions: valid submissions at the bounds, through every content type
// and both endpoints, are stored exactly as sent.
func TestIntake_AcceptedSubmissions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	long := func(email string) string { return strings.Repeat("a", 255-len(email)) + email }
	cases := []struct {
		name   string
		fields func(email string) fields
		check  func(t *testing.T, l leadRow, email string)
	}{
		{"names of 100 characters (umlauts too), e-mail of 255, phone of 50, notes of 10000", func(email string) fields {
			return f("firstName", strings.Repeat("ü", 100), "lastName", strings.Repeat("M", 100), "email", email,
				"phone", "+49 "+strings.Repeat("1", 46), "notes", strings.Repeat("n", 10000))
		}, func(t *testing.T, l leadRow, email string) {
			if l.FirstName != strings.Repeat("ü", 100) || len(l.LastName) != 100 || len(*l.Email) != 255 || len(*l.Phone) != 50 || len(l.Notes) != 10000 {
				t.Errorf("lengths %d %d %d %d %d", len(l.FirstName), len(l.LastName), len(*l.Email), len(*l.Phone), len(l.Notes))
			}
		}},
		{"phone only", func(email string) fields {
			return f("firstName", "Ada", "lastName", "Lovelace", "phone", "+49 30 "+fmt.Sprint(1000000+rand.IntN(8999999)))
		}, nil},
		{"email only, trimmed, unknown source dropped, test via _test", func(email string) fields {
			return f("firstName", " Ada ", "lastName", "Lovelace", "email", "  "+strings.ToUpper(email)+" ", "source", "tv_spot", "_test", "1")
		}, func(t *testing.T, l leadRow, email string) {
			if l.FirstName != "Ada" || l.Source != nil || !l.Test || *l.Email != strings.ToUpper(email) || *l.EmailKey != email {
				t.Errorf("got %+v", l)
			}
		}},
		{"source case-insensitive, _test false", func(email string) fields {
			return valid(email).with("source", " Landing_Page ").with("_test", "false")
		}, func(t *testing.T, l leadRow, email string) {
			if l.Source == nil || *l.Source != "landing_page" || l.Test {
				t.Errorf("source %v test %v", l.Source, l.Test)
			}
		}},
	}
	n := 0
	for _, c := range cases {
		for _, path := range paths {
			for _, kind := range kinds {
				n++
				email := uniqueEmail("ok")
				if strings.HasPrefix(c.name, "names of 100") {
					email = long(email)
				}
				fs := c.fields(email)
				r := send(t, env, post{path: path, kind: kind, fields: fs, key: key})
				if r.Status != http.StatusCreated {
					t.Fatalf("%s %s %s: %d %s", c.name, path, kind, r.Status, r.Body)
				}
				if path == legacyPath && string(r.Body) != "{}" {
					t.Errorf("legacy body %s, want {}", r.Body)
				}
				if path == v1Path && string(r.Body) != `{"status":"created"}` {
					t.Errorf("v1 body %s, want {\"status\":\"created\"}", r.Body)
				}
				if c.check != nil {
					c.check(t, leadByEmail(t, env, co.ID, email), email)
				}
			}
		}
	}
	if got := len(leadsOf(t, env, co.ID)); got != n {
		t.Errorf("%d leads for %d submissions", got, n)
	}
}

// TestIntake_ResponseRows: every row of the legacy response table and its v1 counterpart
// (429 in TestIntake_RateLimit, 413 in TestIntake_TooLarge).
func TestIntake_ResponseRows(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	ctx := t.Context()
	deactivated := pk(t, co, "example.com")
	if _, err := env.Ops.DeactivateKey(ctx, keyPrefix(deactivated)); err != nil {
		t.Fatal(err)
	}
	deleted := pk(t, co, "example.com")
	if err := env.Ops.DeleteKey(ctx, keyPrefix(deleted)); err != nil {
		t.Fatal(err)
	}
	unknown, _, _ := tenancy.NewKey(tenancy.KindPublishable, tenancy.EnvLive)
	unlicensed := env.NewCompany(t, "emails")
	suspendedUser := env.NewUser(t, co, "agent")
	suspendedKey := co.Key(t, operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvLive,
		UserID: &suspendedUser.ID, AllowedDomains: []string{"example.com"}}).Secret
	if _, err := env.AppDBSetUserStatus(ctx, co.ID, suspendedUser.ID, "suspended"); err != nil {
		t.Fatal(err)
	}

	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			key := pk(t, co, "example.com")
			sub := func(kind string) post {
				return post{path: path, kind: kind, fields: valid(uniqueEmail("rows")), key: key, lang: "en"}
			}
			for _, kind := range kinds {
				r := send(t, env, sub(kind))
				if r.Status != 201 {
					t.Fatalf("%s: %d %s", kind, r.Status, r.Body)
				}
			}

			// 401: key missing, unknown, deactivated, deleted, secret, of a suspended user.
			bodyKey := func(k string) post {
				p := sub(asForm)
				p.key = ""
				p.fields = p.fields.with("_key", k)
				return p
			}
			for name, p := range map[string]post{
				"no key":                              {path: path, kind: asJSON, fields: valid("x@example.com")},
				"unknown key":                         {path: path, kind: asJSON, fields: valid("x@example.com"), key: unknown},
				"deactivated key":                     {path: path, kind: asJSON, fields: valid("x@example.com"), key: deactivated},
				"deleted key":                         {path: path, kind: asJSON, fields: valid("x@example.com"), key: deleted},
				"secret key in X-API-Key":             {path: path, kind: asJSON, fields: valid("x@example.com"), key: co.Secret},
				"secret test key in X-API-Key":        {path: path, kind: asJSON, fields: valid("x@example.com"), key: co.TestSecret},
				"key of a suspended user":             {path: path, kind: asJSON, fields: valid("x@example.com"), key: suspendedKey},
				"not a key":                           {path: path, kind: asJSON, fields: valid("x@example.com"), key: "hello"},
				"secret key in _key":                  bodyKey(co.Secret),
				"deactivated key in _key":             bodyKey(deactivated),
				"unknown header wins over valid _key": func() post { p := bodyKey(key); p.key = unknown; return p }(),
				"publishable key as Bearer only": {path: path, kind: asJSON, fields: valid("x@example.com"),
					header: map[string]string{"Authorization": "Bearer " + key}},
			} {
				r := send(t, env, p)
				if r.Status != 401 {
					t.Errorf("%s: %d %s, want 401", name, r.Status, r.Body)
					continue
				}
				if path == legacyPath {
					if b := decodeLegacy(t, r.Body); b.Error != "Invalid or inactive API key" || string(r.Body) != `{"error":"Invalid or inactive API key"}` {
						t.Errorf("%s: body %s", name, r.Body)
					}
				} else if p := r.Problem(t); p.Code != "missing_credential" && p.Code != "invalid_credential" {
					t.Errorf("%s: code %q", name, p.Code)
				}
				if r.Header.Get("RateLimit-Remaining") != "" {
					t.Errorf("%s: a 401 was counted", name)
				}
			}

			// The header wins over _key: a valid header with a wrong _key is accepted.
			p := sub(asForm)
			p.fields = p.fields.with("_key", unknown)
			if r := send(t, env, p); r.Status != 201 {
				t.Errorf("header over _key: %d %s", r.Status, r.Body)
			}
			// _key alone, in every content type.
			for _, kind := range kinds {
				p := sub(kind)
				p.key = ""
				p.fields = p.fields.with("_key", key)
				if r := send(t, env, p); r.Status != 201 {
					t.Errorf("_key in %s: %d %s", kind, r.Status, r.Body)
				}
			}

			// 403: the company's license lacks leads; nothing stored.
			r := send(t, env, post{path: path, kind: asJSON, fields: valid("unlicensed@example.com"), key: unlicensed.Publishable, lang: "en"})
			if r.Status != 403 {
				t.Fatalf("unlicensed: %d %s", r.Status, r.Body)
			}
			if path == legacyPath {
				if string(r.Body) != `{"error":"Leads module not licensed"}` {
					t.Errorf("unlicensed: body %s", r.Body)
				}
			} else if p := r.Problem(t); p.Code != "feature_not_licensed" || p.Detail != "The company's license does not include the Leads module" {
				t.Errorf("unlicensed: %+v", p)
			}
			if n := len(leadsOf(t, env, unlicensed.ID)); n != 0 {
				t.Errorf("unlicensed company got %d leads", n)
			}

			// 400: a body that cannot be read, in the legacy shape or as a v1 problem.
			for name, raw := range map[string]struct{ ct, body, code string }{
				"malformed JSON":             {"application/json", `{"firstName":`, "malformed_json"},
				"JSON array":                 {"application/json", `[{"firstName":"A"}]`, "malformed_json"},
				"JSON null":                  {"application/json", `null`, "malformed_json"},
				"two JSON values":            {"application/json", `{} {}`, "malformed_json"},
				"empty JSON body":            {"application/json", ``, "malformed_json"},
				"JSON not UTF-8":             {"application/json", "{\"firstName\":\"J\xfcrgen\"}", "invalid_encoding"},
				"broken percent-encoding":    {"application/x-www-form-urlencoded", "firstName=%zz", "malformed_form"},
				"form UTF-8 label, Latin-1":  {"application/x-www-form-urlencoded; charset=UTF-8", "firstName=J%FCrgen", "invalid_encoding"},
				"multipart without boundary": {"multipart/form-data", "--x\r\n", "malformed_form"},
			} {
				r := send(t, env, post{path: path, ct: raw.ct, raw: []byte(raw.body), key: key, lang: "de"})
				if r.Status != 400 {
					t.Errorf("%s: %d %s, want 400", name, r.Status, r.Body)
					continue
				}
				if r.Header.Get("Content-Language") != "de" {
					t.Errorf("%s: Content-Language %q", name, r.Header.Get("Content-Language"))
				}
				if path == legacyPath {
					b := decodeLegacy(t, r.Body)
					if b.Error != "Validation failed" || len(b.Violations) != 1 || b.Violations[0].Field != "" || b.Violations[0].Message == "" {
						t.Errorf("%s: body %s", name, r.Body)
					}
				} else if p := r.Problem(t); p.Code != raw.code {
					t.Errorf("%s: code %q, want %q", name, p.Code, raw.code)
				}
			}

			// 415: another content type or charset.
			for name, ct := range map[string]string{
				"text/plain":        "text/plain",
				"no content type":   "",
				"XML":               "application/xml",
				"form in KOI8-R":    "application/x-www-form-urlencoded; charset=koi8-r",
				"broken media type": "application/",
			} {
				r := send(t, env, post{path: path, ct: ct, raw: valid("x@example.com").jsonBody(), key: key, lang: "en"})
				if r.Status != 415 {
					t.Errorf("%s: %d %s, want 415", name, r.Status, r.Body)
					continue
				}
				if path == legacyPath && string(r.Body) != `{"error":"Unsupported Media Type"}` {
					t.Errorf("%s: body %s", name, r.Body)
				}
			}
		})
	}
}

// TestIntake_LegacyUnroutedAnswers: other methods and paths under the legacy path answer in
// its shape too (outside the harness: they are not in the document).
func TestIntake_LegacyUnroutedAnswers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, c := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/public/leads", 405, `{"error":"Method Not Allowed"}`},
		{"DELETE", "/api/public/leads", 405, `{"error":"Method Not Allowed"}`},
		{"POST", "/api/public/leads/extra", 404, `{"error":"Not Found"}`},
	} {
		req, _ := http.NewRequest(c.method, c.path, nil)
		resp, err := env.Server.App.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		apitest.CheckHTTP(t, req, nil, resp, b) // the legacy shape, as the document's LegacyIntakeMessage
		if resp.StatusCode != c.status || string(b) != c.body || resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, resp.StatusCode, b, c.status, c.body)
		}
	}
}

// TestIntake_Languages: Content-Language follows Accept-Language on every answer.
func TestIntake_Languages(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	for _, path := range paths {
		for _, lang := range languages {
			r := send(t, env, post{path: path, kind: asJSON, fields: valid(uniqueEmail("lang")), key: key, lang: lang.header})
			if r.Status != 201 || r.Header.Get("Content-Language") != lang.want || !slices.Contains(r.Header.Values("Vary"), "Accept-Language") {
				t.Errorf("%s %q: %d Content-Language %q Vary %v", path, lang.header, r.Status, r.Header.Get("Content-Language"), r.Header.Values("Vary"))
			}
		}
	}
}
