package privacy

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// request is a PrivacyRequest as the tests read it.
type request struct {
	ID          string         `json:"id"`
	Type        string         `json:"type"`
	Status      string         `json:"status"`
	ContactID   string         `json:"contactId"`
	OwnerID     *string        `json:"ownerId"`
	DownloadURL *string        `json:"downloadUrl"`
	ExpiresAt   *time.Time     `json:"expiresAt"`
	Size        *int64         `json:"size"`
	Summary     map[string]int `json:"summary"`
	Error       *string        `json:"error"`
}

type idOnly struct {
	ID string `json:"id"`
}

var n atomic.Int64

// person is a contact's personal data the tests look for: unique per call, so a dump of the
// database or the bucket can be searched for it.
type person struct {
	First, Last, Email, Phone, IBAN string
}

func newPerson() person {
	i := n.Add(1) + time.Now().UnixNano()%1_000_000*100
	return person{First: fmt.Sprintf("Xaveria%d", i), Last: fmt.Sprintf("Quastenberg%d", i),
		Email: fmt.Sprintf("xq%d@kunde.test", i), Phone: fmt.Sprintf("0171 %07d", i%10_000_000),
		IBAN: "DE89370400440532013000"}
}

// createContact creates p as a private contact (owner: ownerID when set) with key.
func createContact(t testing.TB, env *apitest.Env, key string, p person, ownerID string) string {
	t.Helper()
	body := map[string]any{"type": "private", "firstName": p.First, "lastName": p.Last, "email": p.Email,
		"phones": []map[string]any{{"number": p.Phone}},
		"bank":   map[string]any{"iban": p.IBAN, "bic": "COBADEFFXXX"}}
	if ownerID != "" {
		body["ownerId"] = ownerID
	}
	return apitest.Create[idOnly](t, env, key, "/contacts", body).ID
}

// requestExport posts a data export and wants 202.
func requestExport(t testing.TB, env *apitest.Env, key, contact string) request {
	t.Helper()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/privacy/data-export", Key: key})
	if r.Status != 202 {
		t.Fatalf("data export: %d %s", r.Status, r.Body)
	}
	var out request
	r.Decode(t, &out)
	return out
}

// await polls the request in the list until it has ended (60 s at most).
func await(t testing.TB, env *apitest.Env, key string, req request) request {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p := apitest.Get[apitest.Page[request]](t, env, key, "/privacy-requests?contactId="+req.ContactID)
		for _, r := range p.Data {
			if r.ID == req.ID && (r.Status == "completed" || r.Status == "failed") {
				return r
			}
		}
		if time.Now().After(deadline) {
			var errs string
			_ = env.OwnerDB.QueryRow(`SELECT coalesce(string_agg(kind || ' ' || state || ' ' || errors::text, E'\n'), '')
				FROM river.river_job WHERE args->>'requestId' = $1`, req.ID).Scan(&errs)
			t.Fatalf("privacy request %s has not ended after 60 s; its jobs: %s", req.ID, errs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// downloadPath is the path of a request's link on the server.
func downloadPath(t testing.TB, req request) string {
	t.Helper()
	if req.DownloadURL == nil {
		t.Fatal("no downloadUrl")
	}
	i := strings.Index(*req.DownloadURL, "/privacy-downloads/")
	if i < 0 {
		t.Fatalf("downloadUrl %q", *req.DownloadURL)
	}
	return (*req.DownloadURL)[i:]
}

// download gets path from the server root (no credential).
func download(t testing.TB, env *apitest.Env, path string) *apitest.Response {
	t.Helper()
	return env.Do(t, apitest.Request{Path: "/" + path})
}

// unzip reads every file of a ZIP.
func unzip(t testing.TB, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("open zip: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		c, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		out[f.Name] = c
	}
	return out
}
