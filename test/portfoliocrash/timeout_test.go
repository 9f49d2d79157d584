package portfoliocrash

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestPortfolio_TimeoutFailsTransfer validates a file of 20,000 contracts in a serve process
// whose validation runs may take 250 ms (PORTFOLIO_VALIDATE_TIMEOUT): the run times out, the
// transfer fails with a message saying so, and the job is not retried (cancelled after one
// attempt, still so seconds later). Bug (issue 20, item 7): a run that timed out was retried
// (up to 25 attempts of 10 minutes) and its transfer stayed pending without an error.
func TestPortfolio_TimeoutFailsTransfer(t *testing.T) {
	env := apitest.New(t)
	co := env.NewCompany(t)
	var file bytes.Buffer
	if _, err := gdv.Generate(&file, gdv.GenerateOptions{Contracts: 20000, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	srv := env.StartServe(t, map[string]string{"BLOB_URL": blobstore.FileURL(t.TempDir()),
		"PORTFOLIO_VALIDATE_TIMEOUT": "250ms"})
	client := apitest.Client(t)
	get := func(req *http.Request) (int, map[string]any) {
		t.Helper()
		req.Header.Set("Authorization", "Bearer "+co.Secret)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		return resp.StatusCode, v
	}
	body, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler"}, "bestand.gdv", file.Bytes())
	req, _ := http.NewRequest("POST", srv.URL+"/api/public/v1/portfolio-transfers", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	status, tr := get(req)
	if status != 202 {
		t.Fatalf("upload: %d %v", status, tr)
	}
	id, _ := tr["id"].(string)
	deadline := time.Now().Add(60 * time.Second)
	for tr["status"] != "failed" {
		if time.Now().After(deadline) {
			t.Fatalf("transfer %v, want failed\n%s", tr, srv.Output())
		}
		time.Sleep(200 * time.Millisecond)
		req, _ := http.NewRequest("GET", srv.URL+"/api/public/v1/portfolio-transfers/"+id, nil)
		_, tr = get(req)
	}
	if msg, _ := tr["error"].(string); msg != "timeout: the validation run did not finish within 250ms" {
		t.Errorf("error %q", msg)
	}
	time.Sleep(3 * time.Second) // a retry would come within a second or two (river's first backoff)
	var attempts int
	var state, errs string
	if err := env.OwnerDB.QueryRow(`SELECT attempt, state, errors::text FROM river.river_job WHERE args->>'transferId' = $1`, id).
		Scan(&attempts, &state, &errs); err != nil {
		t.Fatal(err)
	}
	if attempts != 1 || state != "cancelled" || !strings.Contains(errs, "did not finish within 250ms") {
		t.Errorf("job %s after %d attempts (%s), want cancelled after 1", state, attempts, errs)
	}
}
