package documents

import (
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// released is the release part of a Document.
type released struct {
	ID                 string     `json:"id"`
	ReleasedToCustomer bool       `json:"releasedToCustomer"`
	ReleasedAt         *time.Time `json:"releasedAt"`
}

// TestDocuments_ReleaseAtUpload: releasedToCustomer=true at upload releases the document (the
// customer portal lists it), absent or false does not; anything else is 422 invalid_boolean and
// stores nothing. Catches the field ignored, or taken as true for any value.
func TestDocuments_ReleaseAtUpload(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	contract := mustContract(t, env, a.Secret, contact, "REL-1")
	for _, c := range []struct {
		name, path string
		fields     map[string]string
		want       bool
	}{
		{"contact, released", "/contacts/" + contact + "/documents", map[string]string{"releasedToCustomer": "true"}, true},
		{"contract, released", "/contracts/" + contract + "/documents", map[string]string{"releasedToCustomer": "true"}, true},
		{"explicitly not", "/contacts/" + contact + "/documents", map[string]string{"releasedToCustomer": "false"}, false},
		{"absent", "/contacts/" + contact + "/documents", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := upload(t, env, a.Secret, c.path, c.fields, "a.pdf", pdf)
			if r.Status != 201 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			var d released
			r.Decode(t, &d)
			if d.ReleasedToCustomer != c.want || (d.ReleasedAt != nil) != c.want {
				t.Fatalf("releasedToCustomer %v releasedAt %v, want %v", d.ReleasedToCustomer, d.ReleasedAt, c.want)
			}
			got := apitest.Get[released](t, env, a.Secret, "/documents/"+d.ID)
			if got.ReleasedToCustomer != c.want {
				t.Errorf("read back: releasedToCustomer %v, want %v", got.ReleasedToCustomer, c.want)
			}
		})
	}
	t.Run("not a boolean", func(t *testing.T) {
		var before int
		_ = env.OwnerDB.QueryRow("SELECT count(*) FROM documents WHERE company_id = $1", a.ID).Scan(&before)
		for _, v := range []string{"yes", "1", "TRUE", ""} {
			r := upload(t, env, a.Secret, "/contacts/"+contact+"/documents", map[string]string{"releasedToCustomer": v}, "a.pdf", pdf)
			if r.Status != 422 {
				t.Fatalf("%q: %d %s", v, r.Status, r.Body)
			}
			if !strings.Contains(string(r.Body), `"invalid_boolean"`) {
				t.Errorf("%q: %s, want field code invalid_boolean", v, r.Body)
			}
		}
		var after int
		_ = env.OwnerDB.QueryRow("SELECT count(*) FROM documents WHERE company_id = $1", a.ID).Scan(&after)
		if after != before {
			t.Errorf("%d documents stored by refused uploads", after-before)
		}
	})
}

// TestDocuments_Release: PATCH /documents/{id} {releasedToCustomer} releases and withdraws,
// needs If-Match (428) with the current ETag (412), bumps the version and records
// document.updated only when something changed, and refuses every other field, null, a wrong
// media type, another company's document and a key without documents:write. Catches a release
// without precondition, a PATCH that changes immutable fields, and a version that does not move
// (a stale If-Match on DELETE would then pass).
func TestDocuments_Release(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	d := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "vertrag.pdf", pdf)
	path := "/documents/" + d.ID
	patch := func(key, etag string, body any) *apitest.Response {
		h := map[string]string{"Content-Type": "application/merge-patch+json"}
		if etag != "" {
			h["If-Match"] = etag
		}
		return env.Do(t, apitest.Request{Method: "PATCH", Path: path, Key: key, Body: body, Header: h})
	}
	etag := func() string {
		t.Helper()
		r := env.Do(t, apitest.Request{Path: path, Key: a.Secret})
		return r.Header.Get("ETag")
	}
	v1 := etag()

	env.Run(t, []apitest.Case{
		{Name: "without If-Match 428", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"releasedToCustomer":true}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json"}, Status: 428, Problem: "if_match_required"},
		{Name: "stale If-Match 412", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"releasedToCustomer":true}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": `"99"`}, Status: 412,
			Problem: "etag_mismatch"},
		{Name: "another field 422", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"filename":"x.exe"}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 422,
			Check: apitest.FieldErrors("filename:unknown_field")},
		{Name: "server-owned field 422", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"id":"x","releasedToCustomer":true}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 422},
		{Name: "null 422", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"releasedToCustomer":null}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 422,
			Check: apitest.FieldErrors("releasedToCustomer:required")},
		{Name: "a string 422", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"releasedToCustomer":"true"}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 422},
		{Name: "malformed JSON 400", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"releasedToCustomer":`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 400},
		{Name: "not a merge patch 415", Key: a.Secret, Method: "PATCH", Path: path, Body: `releasedToCustomer=true`,
			Header: map[string]string{"Content-Type": "text/plain", "If-Match": v1}, Status: 415},
		{Name: "malformed id 400", Key: a.Secret, Method: "PATCH", Path: "/documents/nope", Body: `{"releasedToCustomer":true}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 400},
		{Name: "other company 404", Key: b.Secret, Method: "PATCH", Path: path, Body: `{"releasedToCustomer":true}`,
			Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1}, Status: 404,
			Problem: "not_found"},
		{Name: "write scope missing 403", Key: a.KeyWithScopes(t, "documents:read"), Method: "PATCH", Path: path,
			Body: `{"releasedToCustomer":true}`, Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": v1},
			Status: 403, Problem: "insufficient_scope"},
	})
	if got := apitest.Get[released](t, env, a.Secret, path); got.ReleasedToCustomer || etag() != v1 {
		t.Fatalf("refused patches changed the document: %+v, ETag %s (was %s)", got, etag(), v1)
	}

	r := patch(a.Secret, v1, map[string]any{"releasedToCustomer": true})
	if r.Status != 200 {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	var rel released
	r.Decode(t, &rel)
	v2 := r.Header.Get("ETag")
	if !rel.ReleasedToCustomer || rel.ReleasedAt == nil || v2 == v1 {
		t.Fatalf("after release: %+v, ETag %s (was %s)", rel, v2, v1)
	}
	if r := patch(a.Secret, v2, map[string]any{"releasedToCustomer": true}); r.Status != 200 || r.Header.Get("ETag") != v2 {
		t.Errorf("releasing again: %d, ETag %s, want 200 and the same version %s", r.Status, r.Header.Get("ETag"), v2)
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: path, Key: a.Secret, Header: map[string]string{"If-Match": v1}}); r.Status != 412 {
		t.Errorf("DELETE with the ETag from before the release: %d, want 412", r.Status)
	}
	r = patch(a.Secret, v2, map[string]any{"releasedToCustomer": false})
	r.Decode(t, &rel)
	if r.Status != 200 || rel.ReleasedToCustomer || rel.ReleasedAt != nil {
		t.Fatalf("withdraw: %d %s", r.Status, r.Body)
	}
	ev := env.Do(t, apitest.Request{Path: "/events?limit=100&types=document.updated", Key: a.Secret})
	if ev.Status != 200 || strings.Count(string(ev.Body), `"document.updated"`) != 2 {
		t.Errorf("document.updated events: %d %s, want 2 (release and withdrawal, not the no-op)", ev.Status, ev.Body)
	}
	var immutable int
	if err := env.OwnerDB.QueryRow(`SELECT count(*) FROM documents WHERE id = $1 AND filename = 'vertrag.pdf' AND sha256 = $2`,
		d.ID, d.Sha256).Scan(&immutable); err != nil || immutable != 1 {
		t.Errorf("the release changed more than the release: %d %v", immutable, err)
	}
}
