// Package intake tests the lead intake against lead-intake.md: both endpoints, all three
// content types, both languages, duplicates, concurrency, files, CORS, redirects, keys and the
// hourly quota across processes.
package intake

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// The two endpoints as apitest.Request paths ("//" = from the server root).
const (
	legacyPath = "//api/public/leads"
	v1Path     = "/leads/intake"
)

var paths = []string{legacyPath, v1Path}

// Content types.
const (
	asJSON      = "json"
	asForm      = "form"
	asMultipart = "multipart"
)

var kinds = []string{asJSON, asForm, asMultipart}

// field is one form field; fields keep their order (JSON is built from them).
type field struct{ k, v string }

type fields []field

func f(kv ...string) fields {
	var out fields
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, field{kv[i], kv[i+1]})
	}
	return out
}

// with returns fs with k set to v (added when missing); without drops k.
func (fs fields) with(k, v string) fields {
	out := append(fields{}, fs...)
	for i := range out {
		if out[i].k == k {
			out[i].v = v
			return out
		}
	}
	return append(out, field{k, v})
}

func (fs fields) without(ks ...string) fields {
	var out fields
next:
	for _, x := range fs {
		for _, k := range ks {
			if x.k == k {
				continue next
			}
		}
		out = append(out, x)
	}
	return out
}

// jsonBody builds the JSON object of fs: additionalFields.<name> nested, _meta.url as
// {"_meta": {"url"}}, _test "true" as the boolean.
func (fs fields) jsonBody() []byte {
	m := map[string]any{}
	for _, x := range fs {
		switch {
		case strings.HasPrefix(x.k, "additionalFields."):
			af, _ := m["additionalFields"].(map[string]any)
			if af == nil {
				af = map[string]any{}
				m["additionalFields"] = af
			}
			af[strings.TrimPrefix(x.k, "additionalFields.")] = x.v
		case x.k == "_meta.url":
			m["_meta"] = map[string]any{"url": x.v}
		case x.k == "_test" && x.v == "true":
			m["_test"] = true
		default:
			m[x.k] = x.v
		}
	}
	b, _ := json.Marshal(m)
	return b
}

func (fs fields) urlencoded() []byte {
	var parts []string
	for _, x := range fs {
		parts = append(parts, url.QueryEscape(x.k)+"="+url.QueryEscape(x.v))
	}
	return []byte(strings.Join(parts, "&"))
}

// upload is a file part of a multipart body.
type upload struct {
	field, filename, contentType string
	content                      []byte
}

func (fs fields) multipartBody(files ...upload) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, x := range fs {
		_ = w.WriteField(x.k, x.v)
	}
	for _, u := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, u.field, u.filename))
		if u.contentType != "" {
			h.Set("Content-Type", u.contentType)
		}
		p, _ := w.CreatePart(h)
		_, _ = p.Write(u.content)
	}
	_ = w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

// body encodes fs as kind.
func (fs fields) body(kind string, files ...upload) (string, []byte) {
	switch kind {
	case asJSON:
		return "application/json", fs.jsonBody()
	case asForm:
		return "application/x-www-form-urlencoded", fs.urlencoded()
	}
	return fs.multipartBody(files...)
}

// post is one intake request.
type post struct {
	path   string
	kind   string
	fields fields
	files  []upload
	key    string // X-API-Key; empty: none
	lang   string // Accept-Language; empty: none
	origin string
	header map[string]string
	// ct and raw, when raw is set, are sent as they are.
	ct  string
	raw []byte
}

// send posts p to the package's server through the harness (which validates request and
// answer against the OpenAPI document).
func send(t testing.TB, env *apitest.Env, p post) *apitest.Response {
	t.Helper()
	ct, body := p.ct, p.raw
	if body == nil {
		ct, body = p.fields.body(p.kind, p.files...)
	}
	h := map[string]string{"Content-Type": ct}
	if p.key != "" {
		h["X-API-Key"] = p.key
	}
	if p.lang != "" {
		h["Accept-Language"] = p.lang
	}
	if p.origin != "" {
		h["Origin"] = p.origin
	}
	for k, v := range p.header {
		h[k] = v
	}
	return env.Do(t, apitest.Request{Method: "POST", Path: p.path, Body: body, Header: h})
}

// sendTo posts p to a server process at base, outside the harness (its exchange validated
// against the OpenAPI document all the same).
func sendTo(t testing.TB, base string, p post) (int, http.Header, []byte) {
	t.Helper()
	ct, body := p.ct, p.raw
	if body == nil {
		ct, body = p.fields.body(p.kind, p.files...)
	}
	path := strings.TrimPrefix(p.path, "/")
	if p.path == v1Path {
		path = "/api/public/v1" + v1Path
	}
	req, err := http.NewRequest("POST", base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	if p.key != "" {
		req.Header.Set("X-API-Key", p.key)
	}
	if p.lang != "" {
		req.Header.Set("Accept-Language", p.lang)
	}
	resp, err := apitest.Client(t).Do(req) // validated against the OpenAPI document; redirects not followed
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// legacyBody is every body the legacy endpoint answers.
type legacyBody struct {
	Error      string `json:"error"`
	Violations []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"violations"`
	RetryAfter int64 `json:"retryAfter"`
}

func decodeLegacy(t testing.TB, b []byte) legacyBody {
	t.Helper()
	var out legacyBody
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return out
}

// valid is a complete submission without a phone (phones would merge unrelated submissions).
func valid(email string) fields {
	return f("firstName", "Jürgen", "lastName", "Müller-Lüdenscheidt", "email", email, "source", "website",
		"notes", "Bitte Rückruf", "additionalFields.interest", "BU", "_meta.url", "https://www.example.com/kontakt")
}

// uniqueEmail is an address no other test uses.
func uniqueEmail(tag string) string {
	return fmt.Sprintf("%s-%s@example.com", tag, uuid.NewString()[:8])
}

// pk issues a live publishable key of co bound to its admin, with domains.
func pk(t testing.TB, co *apitest.Company, domains ...string) string {
	t.Helper()
	return co.Key(t, operator.NewKeyInput{Kind: tenancy.KindPublishable, Env: tenancy.EnvLive,
		UserID: &co.Admin.ID, AllowedDomains: domains}).Secret
}

// keyPrefix is what the CLI names a key by.
func keyPrefix(key string) string { return key[:len(tenancy.PrefixPublishableLive)+8] }

// leadRow is a stored lead as the tests read it from the database.
type leadRow struct {
	ID               uuid.UUID
	FirstName        string
	LastName         string
	Email, EmailKey  *string
	Phone, PhoneKey  *string
	Source, MetaURL  *string
	Notes            string
	AdditionalFields map[string]string
	StageID          uuid.UUID
	OwnerID          *uuid.UUID
	Test, Converted  bool
	Submissions      int
}

// pinned runs f in a transaction of the app role pinned to company (RLS applies).
func pinned(t testing.TB, env *apitest.Env, company uuid.UUID, fn func(tx *sql.Tx)) {
	t.Helper()
	if err := env.Pinned(context.Background(), company, func(tx *sql.Tx) error { fn(tx); return nil }); err != nil {
		t.Fatal(err)
	}
}

// leadsOf returns the company's leads, oldest first.
func leadsOf(t testing.TB, env *apitest.Env, company uuid.UUID) []leadRow {
	t.Helper()
	var out []leadRow
	pinned(t, env, company, func(tx *sql.Tx) {
		rows, err := tx.Query(`SELECT id, first_name, last_name, email, email_key, phone, phone_key, source, meta_url,
			notes, additional_fields, stage_id, owner_id, test, converted, submissions FROM leads ORDER BY created_at, id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var l leadRow
			var af []byte
			if err := rows.Scan(&l.ID, &l.FirstName, &l.LastName, &l.Email, &l.EmailKey, &l.Phone, &l.PhoneKey, &l.Source,
				&l.MetaURL, &l.Notes, &af, &l.StageID, &l.OwnerID, &l.Test, &l.Converted, &l.Submissions); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(af, &l.AdditionalFields); err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
	return out
}

// leadByEmail returns the one lead with e-mail key email, failing unless exactly one exists.
func leadByEmail(t testing.TB, env *apitest.Env, company uuid.UUID, email string) leadRow {
	t.Helper()
	var found []leadRow
	for _, l := range leadsOf(t, env, company) {
		if l.EmailKey != nil && *l.EmailKey == strings.ToLower(email) {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d leads with e-mail %s, want 1", len(found), email)
	}
	return found[0]
}

// countOf runs a count query pinned to company.
func countOf(t testing.TB, env *apitest.Env, company uuid.UUID, query string, args ...any) int {
	t.Helper()
	var n int
	pinned(t, env, company, func(tx *sql.Tx) {
		if err := tx.QueryRow(query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
	})
	return n
}

// asOperator runs statements as the operator role on the owner's connection (companies are
// changed only by the operator).
func asOperator(t testing.TB, env *apitest.Env, stmts ...func(tx *sql.Tx) error) {
	t.Helper()
	db, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("SET LOCAL ROLE brokerdesk_operator"); err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if err := s(tx); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// freshWindow waits for the next clock hour when the current one ends within margin, so a
// test counting a key's hourly quota does not straddle the reset.
func freshWindow(t testing.TB, margin time.Duration) {
	t.Helper()
	now := time.Now()
	next := now.Truncate(time.Hour).Add(time.Hour)
	if left := next.Sub(now); left < margin {
		t.Logf("waiting %s for the next clock hour", left.Round(time.Second))
		time.Sleep(left + time.Second)
	}
}
