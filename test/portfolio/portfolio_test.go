// Package portfolio tests /portfolio-transfers end to end: upload, validation on the job
// queue, commit in batches, re-import, the GDV sample files' counts, error cases and a commit
// killed half-way.
package portfolio

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// setup returns the package's server, working jobs like a serve process.
func setup(t testing.TB) *apitest.Env { return apitest.Working(t) }

const samples = "../../app/formats/gdv/testdata" // the files of shared/testdata/gdv, byte-exact

type transfer struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Error   *string
	Summary struct {
		Contracts          int64 `json:"contracts"`
		ContractsToCreate  int64 `json:"contractsToCreate"`
		ContractsToUpdate  int64 `json:"contractsToUpdate"`
		ContractsUnchanged int64 `json:"contractsUnchanged"`
		ContractsSkipped   int64 `json:"contractsSkipped"`
		PersonsToCreate    int64 `json:"personsToCreate"`
		PersonsMatched     int64 `json:"personsMatched"`
		Packages           []struct {
			Check struct {
				Status string `json:"status"`
			} `json:"check"`
		} `json:"packages"`
	} `json:"summary"`
	Issues   []map[string]any `json:"issues"`
	Progress struct {
		Total, Done, Created, Updated, Unchanged, Skipped int64
		Contacts                                          int64 `json:"contactsCreated"`
	} `json:"progress"`
}

// multipartBody builds a multipart body of fields and a file.
func multipartBody(t *testing.T, fields map[string]string, filename string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if filename != "" {
		fw, _ := w.CreateFormFile("file", filename)
		_, _ = fw.Write(content)
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func upload(t *testing.T, env *apitest.Env, key string, fields map[string]string, name string, content []byte) *apitest.Response {
	t.Helper()
	body, ct := multipartBody(t, fields, name, content)
	return env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers", Key: key, Body: body,
		Header: map[string]string{"Content-Type": ct}})
}

// await polls the transfer until its status is one of want (or fails after 60 s).
func await(t *testing.T, env *apitest.Env, key, id string, want ...string) transfer {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var tr transfer
		r := env.Do(t, apitest.Request{Path: "/portfolio-transfers/" + id, Key: key})
		r.Decode(t, &tr)
		for _, w := range want {
			if tr.Status == w {
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("transfer %s is %s, want %v: %s", id, tr.Status, want, r.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func count(t *testing.T, env *apitest.Env, key, path string) int {
	t.Helper()
	n := 0
	for path != "" {
		r := env.Do(t, apitest.Request{Path: path, Key: key})
		var p apitest.Page[map[string]any]
		r.Decode(t, &p)
		n += len(p.Data)
		path = ""
		if p.Pagination.HasMore {
			path = "/contracts?limit=100&cursor=" + p.Pagination.NextCursor
		}
	}
	return n
}

// TestPortfolio_GDVSamples imports every sample file: the contract and policyholder counts and
// the 9999 verdicts of SOURCES.md, and a second import of the same file changes nothing.
func TestPortfolio_GDVSamples(t *testing.T) {
	env := setup(t)
	for _, tc := range []struct {
		file      string
		contracts int64
		persons   int64 // contacts created: policyholders, never two people made one
		check     string
	}{
		{"musterdatei_041222.txt", 14, 10, "consistent"},
		// Five policyholders: two masked records ("xxxxxxxx", no birth date) stay two people.
		{"igor_110120.txt", 5, 5, "inconsistent"},
		{"Leben_Wagnis2_Riester.GDV", 1, 1, "inconsistent"},
		{"testcase_0220_mit_0221_versetzt.txt", 2, 1, "inconsistent"},
		{"multiple_addresses.gdv", 1, 1, "inconsistent"},
		{"kranken.gdv", 1, 1, "inconsistent"},
		{"missing_nachsatz.gdv", 1, 1, "missing"},
		// Application data (0052 … 9952): four applications, each its own contract with status
		// application; the parties have no birth date and no customer number, so each
		// application's policyholder is a contact of its own (never two people made one).
		{"muster_kfzantrag.gdv", 4, 4, "inconsistent"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			co := env.NewCompany(t)
			content, err := os.ReadFile(filepath.Join(samples, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			r := upload(t, env, co.Secret, map[string]string{"format": "gdv_vu_vermittler", "source": "bestand"}, tc.file, content)
			if r.Status != 202 {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			var tr transfer
			r.Decode(t, &tr)
			tr = await(t, env, co.Secret, tr.ID, "validated", "failed")
			s := tr.Summary
			if tr.Status != "validated" || s.Contracts != tc.contracts || s.ContractsToCreate != tc.contracts ||
				s.PersonsToCreate != tc.persons || len(s.Packages) != 1 || s.Packages[0].Check.Status != tc.check {
				t.Fatalf("validated: %+v", tr)
			}
			if n := count(t, env, co.Secret, "/contracts?limit=100"); n != 0 {
				t.Fatalf("%d contracts before commit", n)
			}
			r = env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers/" + tr.ID + "/commit", Key: co.Secret})
			if r.Status != 202 {
				t.Fatalf("commit: %d %s", r.Status, r.Body)
			}
			tr = await(t, env, co.Secret, tr.ID, "committed")
			if tr.Progress.Created != tc.contracts || tr.Progress.Contacts != tc.persons || tr.Progress.Done != tc.contracts {
				t.Errorf("committed: %+v", tr.Progress)
			}
			if n := count(t, env, co.Secret, "/contracts?limit=100"); int64(n) != tc.contracts {
				t.Errorf("%d contracts, want %d", n, tc.contracts)
			}
			// Again, with autoCommit: nothing changes, and the summary says so.
			r = upload(t, env, co.Secret, map[string]string{"format": "gdv_vu_vermittler", "source": "bestand", "autoCommit": "true"},
				tc.file, content)
			r.Decode(t, &tr)
			tr = await(t, env, co.Secret, tr.ID, "committed")
			if tr.Summary.ContractsUnchanged != tc.contracts || tr.Summary.ContractsToCreate != 0 || tr.Summary.PersonsToCreate != 0 ||
				tr.Progress.Unchanged != tc.contracts || tr.Progress.Contacts != 0 {
				t.Errorf("re-import: %+v", tr)
			}
			if n := count(t, env, co.Secret, "/contracts?limit=100"); int64(n) != tc.contracts {
				t.Errorf("after re-import %d contracts, want %d", n, tc.contracts)
			}
		})
	}
}

func TestPortfolio_Errors(t *testing.T) {
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	content, _ := os.ReadFile(filepath.Join(samples, "kranken.gdv"))
	r := upload(t, env, a.Secret, map[string]string{"format": "gdv_vu_vermittler"}, "kranken.gdv", content)
	var tr transfer
	r.Decode(t, &tr)
	one := "/portfolio-transfers/" + tr.ID

	bad := func(name string, fields map[string]string, file string, data []byte, status int, fieldsWant ...string) apitest.Case {
		body, ct := multipartBody(t, fields, file, data)
		return apitest.Case{Name: name, Key: a.Secret, Method: "POST", Path: "/portfolio-transfers", Body: body,
			Header: map[string]string{"Content-Type": ct}, Status: status, Check: func(t *testing.T, r *apitest.Response) {
				if len(fieldsWant) == 0 {
					return
				}
				var got []string
				for _, e := range r.Problem(t).Errors {
					got = append(got, e.Field+":"+e.Code)
				}
				if fmt.Sprint(got) != fmt.Sprint(fieldsWant) {
					t.Errorf("errors %v, want %v", got, fieldsWant)
				}
			}}
	}
	env.Run(t, []apitest.Case{
		bad("format and file missing", map[string]string{}, "", nil, 422, "format:required", "file:required"),
		bad("unknown format, bad values", map[string]string{"format": "xls", "ownerId": "x", "autoCommit": "ja",
			"writeMode": "merge", "encoding": "ebcdic"}, "a.txt", content, 422,
			"format:invalid_enum", "ownerId:invalid_uuid", "autoCommit:invalid_boolean", "writeMode:invalid_enum", "encoding:invalid_enum"),
		bad("csv needs a mapping", map[string]string{"format": "csv"}, "a.csv", []byte("a;b\n"), 422, "mappingId:required"),
		bad("empty file", map[string]string{"format": "gdv_vu_vermittler"}, "a.txt", nil, 422, "file:empty"),
		bad("unknown field", map[string]string{"format": "gdv_vu_vermittler", "color": "red"}, "a.txt", content, 422, "color:unknown_field"),
		{Name: "not multipart", Key: a.Secret, Method: "POST", Path: "/portfolio-transfers", Body: `{"format":"csv"}`, Status: 415},
		{Name: "read scope only", Key: a.KeyWithScopes(t, "portfolio:read"), Method: "POST", Path: "/portfolio-transfers",
			Body: `{}`, Status: 403, Problem: "insufficient_scope"},
		{Name: "no key", Method: "GET", Path: "/portfolio-transfers", Status: 401, Problem: "missing_credential"},
		{Name: "list", Key: a.Secret, Method: "GET", Path: "/portfolio-transfers", Status: 200},
		{Name: "list bad status", Key: a.Secret, Method: "GET", Path: "/portfolio-transfers?status=done", Status: 422},
		{Name: "other company gets 404", Key: b.Secret, Method: "GET", Path: one, Status: 404},
		{Name: "other company cannot commit", Key: b.Secret, Method: "POST", Path: one + "/commit", Status: 404},
		{Name: "bad id", Key: a.Secret, Method: "GET", Path: "/portfolio-transfers/x", Status: 400},
		{Name: "other company's list is empty", Key: b.Secret, Method: "GET", Path: "/portfolio-transfers", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if bytes.Contains(r.Body, []byte(tr.ID)) {
					t.Error("B lists A's transfer")
				}
			}},
	})

	// Not a GDV file: the transfer fails with the reason, and commit is refused.
	r = upload(t, env, a.Secret, map[string]string{"format": "gdv_vu_vermittler"}, "x.pdf", []byte("%PDF-1.4 nothing here"))
	r.Decode(t, &tr)
	tr = await(t, env, a.Secret, tr.ID, "failed")
	if tr.Error == nil {
		t.Errorf("failed without error: %+v", tr)
	}
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers/" + tr.ID + "/commit", Key: a.Secret})
	if r.Status != 409 || r.Problem(t).Code != "transfer_not_validated" {
		t.Errorf("commit of a failed transfer: %d %s", r.Status, r.Body)
	}
}
