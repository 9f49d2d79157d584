package documents

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestDocuments_StorageWriteFails: blob storage failing an upload's write (here a file where
// the company's blob directory belongs, so the store cannot create the blob) is 503
// unavailable with Retry-After, never a 500, and leaves no document; the same upload succeeds
// once the storage works again.
func TestDocuments_StorageWriteFails(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	dir := companyBlobDir(t, env, a.ID.String())
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := "/contacts/" + contact + "/documents"
	r := upload(t, env, a.Secret, path, nil, "a.pdf", pdf)
	if r.Status != 503 || r.Problem(t).Code != "unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("upload with failing storage: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	// The list of the contact's documents (GET on the upload path is no route: it answered 405,
	// whose body has no data, so the check passed whatever was stored).
	list := apitest.Get[apitest.Page[document]](t, env, a.Secret, "/documents?contactId="+contact)
	if len(list.Data) != 0 {
		t.Fatalf("documents after a failed upload: %+v", list.Data)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	mustUpload(t, env, a.Secret, path, "a.pdf", pdf)
}
