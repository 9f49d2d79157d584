package imports

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactimport"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// wantField checks a 422's field error (field, code).
func wantField(field, code string) func(t *testing.T, r *apitest.Response) {
	return func(t *testing.T, r *apitest.Response) {
		t.Helper()
		p := r.Problem(t)
		for _, e := range p.Errors {
			if e.Field == field && e.Code == code {
				return
			}
		}
		t.Errorf("no error %s %s in %s", field, code, r.Body)
	}
}

// TestImports_Errors is the error table of the five operations; each case names the bug it
// catches.
func TestImports_Errors(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	csv := []byte("Vorname;Nachname;E-Mail\nAda;Lovelace;ada@example.test\n")
	multi := func(fields map[string]string, name string, content []byte) (any, map[string]string) {
		body, h := multipartBody(t, fields, name, content)
		return body, h
	}
	post := func(name string, fields map[string]string, file string, content []byte, status int, check func(*testing.T, *apitest.Response)) apitest.Case {
		body, h := multi(fields, file, content)
		return apitest.Case{Name: name, Key: a.Secret, Method: "POST", Path: "/imports", Body: body, Header: h, Status: status, Check: check}
	}
	xls := []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0, 0, 0}
	im := mustAnalyze(t, env, a.Secret, nil, csv)
	done := mustAnalyze(t, env, a.Secret, nil, csv)
	mustCommit(t, env, a.Secret, done.ID, nil)
	// A queued import whose analysis never runs (no job): "commit before analysed" without a race.
	var queued uuid.UUID
	env.InCompany(t, a.ID, func(ctx context.Context, db *ent.Client) error {
		q, err := db.ContactImport.Create().SetFormat(contactimport.FormatCsv).SetContactType(contactimport.ContactTypePrivate).
			SetFilename("x.csv").SetSize(1).SetSha256("0000000000000000000000000000000000000000000000000000000000000000").
			SetBlobKey("imports/none").Save(ctx)
		if err == nil {
			queued = q.ID
		}
		return err
	})
	commit := func(name, id string, body any, key string, status int, code string) apitest.Case {
		return apitest.Case{Name: name, Key: key, Method: "POST", Path: "/imports/" + id + "/commit", Body: body, Status: status, Problem: code}
	}
	env.Run(t, []apitest.Case{
		// a file part left out must not make an empty import
		post("missing file is 422", map[string]string{"contactType": "private"}, "", nil, 422, wantField("file", "required")),
		// a PDF renamed .csv must be refused by its content, not read as text
		post("pdf is 422", nil, "kontakte.csv", []byte("%PDF-1.7\n%âãÏÓ\n"), 422, wantField("file", "unsupported_type")),
		// a legacy .xls (OLE2) must not be taken for a workbook or CSV
		post("xls is 422", nil, "kontakte.xls", xls, 422, wantField("file", "unsupported_type")),
		// an empty file is no import
		post("empty file is 422", nil, "leer.csv", []byte{}, 422, wantField("file", "empty")),
		// a ZIP that is not a workbook is refused at upload, not failed later
		post("zip without workbook parts is 422", nil, "x.xlsx", []byte("PK\x03\x04garbage"), 422, wantField("file", "unreadable")),
		// mapping must be JSON
		post("bad mapping json is 422", map[string]string{"mapping": "{Vorname:firstName"}, "k.csv", csv, 422, wantField("mapping", "invalid_mapping")),
		// an unknown field key must not be ignored silently
		post("unknown field key is 422", map[string]string{"mapping": `{"Vorname":"vorname"}`}, "k.csv", csv, 422,
			wantField("mapping.Vorname", "unknown_field")),
		// a column the file lacks means the mapping is for another file
		post("unknown column is 422", map[string]string{"mapping": `{"Surname":"lastName"}`}, "k.csv", csv, 422,
			wantField("mapping.Surname", "unknown_column")),
		// a field mapped twice would let one column overwrite the other
		post("field mapped twice is 422", map[string]string{"mapping": `{"Vorname":"firstName","Nachname":"firstName"}`}, "k.csv", csv, 422,
			nil),
		// a business field key on a private import is no field of that contact
		post("business key on private import is 422", map[string]string{"mapping": `{"Vorname":"business.companyName"}`}, "k.csv", csv, 422,
			wantField("mapping.Vorname", "unknown_field")),
		// the owner must be a user of the company (not another company's)
		post("unknown ownerId is 422", map[string]string{"ownerId": b.Admin.ID.String()}, "k.csv", csv, 422, wantField("ownerId", "unknown_user")),
		post("malformed ownerId is 422", map[string]string{"ownerId": "nope"}, "k.csv", csv, 422, wantField("ownerId", "invalid_uuid")),
		post("bad contactType is 422", map[string]string{"contactType": "person"}, "k.csv", csv, 422, wantField("contactType", "invalid_enum")),
		post("unknown form field is 422", map[string]string{"format": "csv"}, "k.csv", csv, 422, wantField("format", "unknown_field")),
		{Name: "not multipart is 415", Key: a.Secret, Method: "POST", Path: "/imports", Body: map[string]any{"file": "x"}, Status: 415},
		// the scope: another area's key must not import
		{Name: "wrong scope is 403", Key: a.KeyWithScopes(t, "contacts:write"), Method: "GET", Path: "/imports", Status: 403},
		{Name: "unknown id is 404", Key: a.Secret, Method: "GET", Path: "/imports/" + uuid.NewString(), Status: 404},
		{Name: "malformed id is 400", Key: a.Secret, Method: "GET", Path: "/imports/nope", Status: 400},
		// another company's import must be invisible, never 403
		{Name: "other company gets 404", Key: b.Secret, Method: "GET", Path: "/imports/" + im.ID, Status: 404},
		{Name: "other company's rows 404", Key: b.Secret, Method: "GET", Path: "/imports/" + im.ID + "/rows", Status: 404},
		commit("other company's commit 404", im.ID, nil, b.Secret, 404, ""),
		{Name: "unknown id rows 404", Key: a.Secret, Method: "GET", Path: "/imports/" + uuid.NewString() + "/rows", Status: 404},
		// the outcome filter must be validated, not ignored
		{Name: "bad outcome filter is 422", Key: a.Secret, Method: "GET", Path: "/imports/" + im.ID + "/rows?outcome=done", Status: 422,
			Check: wantField("outcome", "invalid_enum")},
		{Name: "bad status filter is 422", Key: a.Secret, Method: "GET", Path: "/imports?status=done", Status: 422},
		commit("bad duplicates policy is 422", im.ID, map[string]any{"duplicates": "merge"}, a.Secret, 422, ""),
		commit("unknown body field is 422", im.ID, map[string]any{"policy": "skip"}, a.Secret, 422, ""),
		commit("commit before analysed is 409", queued.String(), nil, a.Secret, 409, "import_not_analyzed"),
		commit("commit of a completed import is 409", done.ID, nil, a.Secret, 409, "import_committed"),
		commit("unknown id commit is 404", uuid.NewString(), nil, a.Secret, 404, ""),
	})
	// The list shows a's imports only.
	p := apitest.Get[apitest.Page[importJob]](t, env, a.Secret, "/imports?limit=100")
	var ids []string
	for _, x := range p.Data {
		ids = append(ids, x.ID)
	}
	if !slices.Contains(ids, im.ID) || !slices.Contains(ids, queued.String()) {
		t.Errorf("list %v", ids)
	}
	if p := apitest.Get[apitest.Page[importJob]](t, env, b.Secret, "/imports"); len(p.Data) != 0 {
		t.Errorf("other company lists %d imports", len(p.Data))
	}
}

// TestImports_CommitTwice: the second commit of the same import is 409 import_committed, and
// the rows are written once. Bug caught: a second commit queued a second job that wrote every
// row again.
func TestImports_CommitTwice(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	im := mustAnalyze(t, env, co.Secret, nil, []byte("Vorname;Nachname\nA;B\nC;D\n"))
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/imports/" + im.ID + "/commit", Key: co.Secret})
	if r.Status != 202 {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/imports/" + im.ID + "/commit", Key: co.Secret,
		Body: map[string]any{"duplicates": "create"}})
	if r.Status != 409 || r.Problem(t).Code != "import_committed" {
		t.Fatalf("second: %d %s", r.Status, r.Body)
	}
	done := await(t, env, co.Secret, im.ID, "completed")
	if done.OutcomeCounts["created"] != 2 || *done.Duplicates != "skip" {
		t.Errorf("%+v", done)
	}
}

// TestImports_IdempotentUpload: the same upload sent again with its Idempotency-Key answers the
// first import, not a second one. Bug caught: a client's retry after a timeout importing the
// file twice.
func TestImports_IdempotentUpload(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	body, h := multipartBody(t, nil, "k.csv", []byte("Vorname;Nachname\nIda;Empotent\n"))
	h["Idempotency-Key"] = uuid.NewString()
	first := env.Do(t, apitest.Request{Method: "POST", Path: "/imports", Key: co.Secret, Body: body, Header: h})
	again := env.Do(t, apitest.Request{Method: "POST", Path: "/imports", Key: co.Secret, Body: body, Header: h})
	var a, b importJob
	first.Decode(t, &a)
	again.Decode(t, &b)
	if first.Status != 202 || again.Status != 202 || a.ID != b.ID || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("first %d %s, again %d %s (replayed %q)", first.Status, a.ID, again.Status, b.ID, again.Header.Get("Idempotent-Replayed"))
	}
	if p := apitest.Get[apitest.Page[importJob]](t, env, co.Secret, "/imports"); len(p.Data) != 1 {
		t.Errorf("%d imports", len(p.Data))
	}
}
