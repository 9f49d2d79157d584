package privacy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/privacy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestExport_ZIP: the export's ZIP opens, its README lists its files, and it carries the
// contact's data (name, e-mail, phone, the sealed IBAN decrypted), a note and a document's
// bytes. Catches: a section or the files left out, the sensitive groups exported sealed or
// not at all, a ZIP cut short (not closed), a README that does not match the contents.
func TestExport_ZIP(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	p := newPerson()
	ct := createContact(t, env, co.Secret, p, "")
	note := "Rückruf wegen Hausrat " + p.Last
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + ct + "/notes", Key: co.Secret,
		Body: map[string]any{"content": note}}); r.Status != 201 {
		t.Fatalf("note: %d %s", r.Status, r.Body)
	}
	doc := apitest.UploadPDF(t, env, co.Secret, ct, "police.pdf")

	req := requestExport(t, env, co.Secret, ct)
	if req.Type != "data_export" || req.Status != "queued" || req.ContactID != ct || req.DownloadURL == nil {
		t.Fatalf("created: %+v", req)
	}
	done := await(t, env, co.Secret, req)
	if done.Status != "completed" || done.ExpiresAt == nil || done.Size == nil || *done.Size == 0 {
		t.Fatalf("ended: %+v (error %v)", done, done.Error)
	}
	// The link is in the creating answer only: the token is not stored.
	if done.DownloadURL != nil {
		t.Errorf("list shows downloadUrl %q", *done.DownloadURL)
	}
	if d := time.Until(*done.ExpiresAt); d < 6*24*time.Hour || d > 8*24*time.Hour {
		t.Errorf("expiresAt %s, want about 7 days ahead", done.ExpiresAt)
	}
	r := download(t, env, downloadPath(t, req))
	if r.Status != 200 {
		t.Fatalf("download: %d %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/zip" {
		t.Errorf("content type %q", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("cache control %q", cc)
	}
	if int64(len(r.Body)) != *done.Size {
		t.Errorf("served %d bytes, size %d", len(r.Body), *done.Size)
	}
	files := unzip(t, r.Body)
	readme := string(files["README.txt"])
	for _, want := range []string{"Auskunft nach Art. 15 DSGVO", "kontakt.json", "notizen-und-aktivitaeten.json",
		"dokumente/", "telefonnummern.json", "vertraege.json", "e-mails.json", "ereignisse.json"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q:\n%s", want, readme)
		}
	}
	for name := range files {
		if name != "README.txt" && !strings.Contains(readme, name) && !strings.Contains(readme, name[:strings.LastIndex(name, "/")+1]) {
			t.Errorf("README does not list %s", name)
		}
	}
	contact := string(files["kontakt.json"])
	for _, want := range []string{p.First, p.Last, strings.ToLower(p.Email), p.IBAN} {
		if !strings.Contains(strings.ToLower(contact), strings.ToLower(want)) {
			t.Errorf("kontakt.json lacks %q:\n%s", want, contact)
		}
	}
	var phones []map[string]any
	if err := json.Unmarshal(files["telefonnummern.json"], &phones); err != nil || len(phones) != 1 {
		t.Errorf("telefonnummern.json: %v %s", err, files["telefonnummern.json"])
	}
	if !strings.Contains(string(files["notizen-und-aktivitaeten.json"]), note) {
		t.Errorf("the note is not exported: %s", files["notizen-und-aktivitaeten.json"])
	}
	var found bool
	for name, b := range files {
		if strings.HasPrefix(name, "dokumente/"+doc+"-") {
			found = true
			if !bytes.Equal(b, apitest.PDF) {
				t.Errorf("%s: %d bytes, not the uploaded file", name, len(b))
			}
		}
	}
	if !found {
		t.Errorf("no file of document %s in %v", doc, keys(files))
	}
	// No secret or storage key leaves: the rows' blob keys and hashes are dropped.
	for name, b := range files {
		if bytes.Contains(b, []byte(`"blob_key"`)) || bytes.Contains(b, []byte(`_hash"`)) {
			t.Errorf("%s carries an internal column", name)
		}
	}
	if done.Summary["documentFiles"] != 1 || done.Summary["contact"] != 1 || done.Summary["phones"] != 1 {
		t.Errorf("summary %v", done.Summary)
	}
	// The link may be used again until it expires.
	if r := download(t, env, downloadPath(t, req)); r.Status != 200 {
		t.Errorf("second download: %d", r.Status)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestExport_LinkIsTheRequests: a link serves its own request's ZIP only; a token changed in
// one character, one of another shape, and a token naming another company are 404. Catches a
// lookup by a prefix of the token, by the company alone, or a token that is not checked.
func TestExport_LinkIsTheRequests(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	a, b := newPerson(), newPerson()
	ca, cb := createContact(t, env, co.Secret, a, ""), createContact(t, env, co.Secret, b, "")
	ra, rb := requestExport(t, env, co.Secret, ca), requestExport(t, env, co.Secret, cb)
	await(t, env, co.Secret, ra)
	await(t, env, co.Secret, rb)
	za := unzip(t, download(t, env, downloadPath(t, ra)).Body)
	zb := unzip(t, download(t, env, downloadPath(t, rb)).Body)
	if !strings.Contains(string(za["kontakt.json"]), a.Last) || strings.Contains(string(za["kontakt.json"]), b.Last) {
		t.Errorf("a's link serves %s", za["kontakt.json"])
	}
	if !strings.Contains(string(zb["kontakt.json"]), b.Last) {
		t.Errorf("b's link serves %s", zb["kontakt.json"])
	}
	path := downloadPath(t, ra)
	last := path[len(path)-1]
	flipped := path[:len(path)-1] + map[bool]string{true: "B", false: "A"}[last == 'A']
	other := env.NewCompany(t)
	oc := createContact(t, env, other.Secret, newPerson(), "")
	ro := requestExport(t, env, other.Secret, oc)
	await(t, env, other.Secret, ro)
	// other's token with co's id in front: the random part of a live token, the wrong company.
	op := downloadPath(t, ro)
	tokA := strings.TrimPrefix(path, "/privacy-downloads/")
	tokO := strings.TrimPrefix(op, "/privacy-downloads/")
	mixed := "/privacy-downloads/" + tokA[:22] + tokO[22:]
	for _, bad := range []string{flipped, "/privacy-downloads/x", "/privacy-downloads/" + strings.Repeat("A", 64), mixed} {
		r := download(t, env, bad)
		if r.Status != 404 {
			t.Errorf("%s: %d, want 404", bad, r.Status)
		}
	}
}

// TestExport_LinkExpires: past expiresAt (the server's clock moved 7 days and a second) the
// link is 404; before it, 200. Not parallel: it moves the package's clock. Catches an expiry
// never checked, or checked against the creation instead of the completion.
func TestExport_LinkExpires(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	req := requestExport(t, env, co.Secret, ct)
	done := await(t, env, co.Secret, req)
	if r := download(t, env, downloadPath(t, req)); r.Status != 200 {
		t.Fatalf("download: %d", r.Status)
	}
	defer skew.Store(0)
	skew.Store(int64(time.Until(*done.ExpiresAt) - time.Second))
	if r := download(t, env, downloadPath(t, req)); r.Status != 200 {
		t.Errorf("a second before expiresAt: %d", r.Status)
	}
	skew.Store(int64(time.Until(*done.ExpiresAt) + time.Second))
	r := download(t, env, downloadPath(t, req))
	if r.Status != 404 {
		t.Errorf("after expiresAt: %d %s", r.Status, r.Body)
	}
}

// TestExport_TokenNotStored: the link's token is nowhere in the database, not even in the
// store of idempotent answers when the client sends an Idempotency-Key (the export does not take
// one: a repeat is a second export). Catches the idempotency middleware put back on the route.
func TestExport_TokenNotStored(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	var reqs []request
	for range 2 {
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/" + ct + "/privacy/data-export", Key: co.Secret,
			Header: map[string]string{"Idempotency-Key": "export-" + ct}})
		if r.Status != 202 {
			t.Fatalf("export: %d %s", r.Status, r.Body)
		}
		var v request
		r.Decode(t, &v)
		reqs = append(reqs, v)
	}
	if reqs[0].ID == reqs[1].ID {
		t.Errorf("a repeated export replayed the first")
	}
	for _, req := range reqs {
		token := strings.TrimPrefix(downloadPath(t, req), "/privacy-downloads/")
		var n int
		if err := env.OwnerDB.QueryRow(`SELECT (SELECT count(*) FROM idempotency_keys WHERE strpos(encode(response_body, 'escape'), $1) > 0)
			+ (SELECT count(*) FROM privacy_requests p WHERE strpos(row_to_json(p)::text, $1) > 0)`, token).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("the token of %s is stored in %d rows", req.ID, n)
		}
	}
}

// TestExport_ContactGone: an export whose contact was deleted before its job ran ends failed
// with the reason ("the contact no longer exists"), no file and no link, and its job is
// cancelled rather than retried. Catches a ZIP written of nothing (or of what others' rows
// still say), a request left processing, and a job retried 8 times for a contact that will
// not come back.
func TestExport_ContactGone(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	ct := createContact(t, env, co.Secret, newPerson(), "")
	etag := env.Do(t, apitest.Request{Path: "/contacts/" + ct, Key: co.Secret}).Header.Get("ETag")
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + ct, Key: co.Secret,
		Header: map[string]string{"If-Match": etag}}); r.Status != 204 {
		t.Fatalf("delete contact: %d %s", r.Status, r.Body)
	}
	// The request as POST .../data-export recorded it while the contact was there; its job runs now.
	id := uuid.Must(uuid.NewV7())
	if _, err := env.OwnerDB.Exec(`INSERT INTO privacy_requests (id, company_id, created_at, updated_at, type, status,
		contact_id, requested_at, download_token_hash) VALUES ($1, $2, now(), now(), 'data_export', 'queued', $3, now(), $4)`,
		id, co.ID, ct, strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}
	if state := runJob(t, env, privacy.ExportArgs{CompanyID: co.ID, RequestID: id}); state != "cancelled" {
		t.Errorf("the export's job: %s, want cancelled", state)
	}
	got := await(t, env, co.Secret, request{ID: id.String(), ContactID: ct})
	if got.Status != "failed" || got.Error == nil || *got.Error != "the contact no longer exists" ||
		got.DownloadURL != nil || got.Size != nil || got.ExpiresAt != nil {
		t.Errorf("request: %+v (error %v)", got, got.Error)
	}
	var blobKey *string
	if err := env.OwnerDB.QueryRow(`SELECT blob_key FROM privacy_requests WHERE id = $1`, id).Scan(&blobKey); err != nil {
		t.Fatal(err)
	}
	if blobKey != nil {
		t.Errorf("blob_key %q, want none", *blobKey)
	}
	if files, _ := os.ReadDir(filepath.Dir(blobFile("privacy/" + co.ID.String() + "/x"))); len(files) != 0 {
		t.Errorf("files under privacy/%s: %d, want none", co.ID, len(files))
	}
}
