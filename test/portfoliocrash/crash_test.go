// Package portfoliocrash runs portfolio jobs in serve processes: one killed in the middle of a
// commit, one whose validation times out. Its own package: no in-process server may work the
// queue beside the processes under test.
package portfoliocrash

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"mime/multipart"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestPortfolio_CommitSurvivesKill commits a generated file of 2,000 contracts in batches of
// 50 in a serve process, kills it (SIGKILL) half-way, and lets a second process take the job
// over (river's rescue): every contract ends up once, and the progress counts each once.
func TestPortfolio_CommitSurvivesKill(t *testing.T) {
	env := apitest.New(t)
	co := env.NewCompany(t)
	var file bytes.Buffer
	if _, err := gdv.Generate(&file, gdv.GenerateOptions{Contracts: 2000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	blobs := t.TempDir()
	extra := map[string]string{"BLOB_URL": blobstore.FileURL(blobs), "PORTFOLIO_BATCH_SIZE": "50",
		"JOBS_RESCUE_AFTER": "31s"}
	first := env.StartServe(t, extra)
	client := apitest.Client(t)
	do := func(base, method, path string, body []byte, ct string) (int, transfer) {
		req, _ := http.NewRequest(method, base+"/api/public/v1"+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+co.Secret)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var tr transfer
		_ = json.Unmarshal(b, &tr)
		return resp.StatusCode, tr
	}
	body, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler"}, "bestand.gdv", file.Bytes())
	status, tr := do(first.URL, "POST", "/portfolio-transfers", body, ct)
	if status != 202 {
		t.Fatalf("upload: %d", status)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, cur := do(first.URL, "GET", "/portfolio-transfers/"+tr.ID, nil, "")
		if cur.Status == "validated" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not validated: %+v", cur)
		}
		time.Sleep(150 * time.Millisecond)
	}
	if status, _ := do(first.URL, "POST", "/portfolio-transfers/"+tr.ID+"/commit", nil, ""); status != 202 {
		t.Fatalf("commit: %d", status)
	}
	for {
		code, cur := do(first.URL, "GET", "/portfolio-transfers/"+tr.ID, nil, "")
		if cur.Status == "committing" && cur.Progress.Done >= 200 {
			if cur.Progress.Done >= 2000 {
				t.Fatalf("committed before the kill: make the file larger")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %d %+v\n%s", code, cur, first.Output())
		}
		time.Sleep(150 * time.Millisecond) // the API allows 600 requests a minute per key
	}
	first.Kill()

	second := env.StartServe(t, extra)
	deadline = time.Now().Add(120 * time.Second)
	for {
		_, cur := do(second.URL, "GET", "/portfolio-transfers/"+tr.ID, nil, "")
		if cur.Status == "committed" {
			tr = cur
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not committed after the restart: %+v\n%s", cur, second.Output())
		}
		time.Sleep(500 * time.Millisecond)
	}
	if tr.Progress.Done != 2000 || tr.Progress.Created != 2000 {
		t.Errorf("progress %+v, want 2000 created once", tr.Progress)
	}
	if n := count(t, env, co.Secret, "/contracts?limit=100"); n != 2000 {
		t.Errorf("%d contracts, want 2000", n)
	}
}

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type transfer struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Progress struct {
		Total, Done, Created, Updated, Unchanged, Skipped int64
	} `json:"progress"`
}

func multipartBody(t *testing.T, fields map[string]string, filename string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	fw, _ := w.CreateFormFile("file", filename)
	_, _ = fw.Write(content)
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func count(t *testing.T, env *apitest.Env, key, path string) int {
	t.Helper()
	n := 0
	for path != "" {
		var p struct {
			Data       []map[string]any
			Pagination struct {
				NextCursor string `json:"nextCursor"`
				HasMore    bool   `json:"hasMore"`
			}
		}
		env.Do(t, apitest.Request{Path: path, Key: key}).Decode(t, &p)
		n += len(p.Data)
		path = ""
		if p.Pagination.HasMore {
			path = "/contracts?limit=100&cursor=" + p.Pagination.NextCursor
		}
	}
	return n
}
