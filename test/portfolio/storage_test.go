package portfolio

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestPortfolio_StorageWriteFails: blob storage failing while a portfolio file streams in (a
// file where the company's blob directory belongs) is 503 unavailable with Retry-After, never a
// 500, and records no transfer; the same upload succeeds once the storage works again.
func TestPortfolio_StorageWriteFails(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	u, err := url.Parse(env.Config.BlobURL)
	if err != nil || u.Scheme != "file" {
		t.Fatalf("BLOB_URL %q is not a directory", env.Config.BlobURL)
	}
	dir := filepath.Join(filepath.FromSlash(u.Path), "portfolio", co.ID.String())
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(filepath.Join(samples, "musterdatei_041222.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{"format": "gdv_vu_vermittler", "source": "bestand"}
	r := upload(t, env, co.Secret, fields, "m.txt", content)
	if r.Status != 503 || r.Problem(t).Code != "unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("upload with failing storage: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	var list struct{ Data []transfer }
	env.Do(t, apitest.Request{Path: "/portfolio-transfers", Key: co.Secret}).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("transfers after a failed upload: %+v", list.Data)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if r := upload(t, env, co.Secret, fields, "m.txt", content); r.Status != 202 {
		t.Fatalf("upload after the storage recovered: %d %s", r.Status, r.Body)
	}
}
