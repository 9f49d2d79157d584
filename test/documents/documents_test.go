// Package documents tests /documents, the uploads to contacts and contracts, the blobs behind
// them and the orphan sweep.
package documents

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type document struct {
	ID          string  `json:"id"`
	ContactID   string  `json:"contactId"`
	ContractID  *string `json:"contractId"`
	Type        string  `json:"type"`
	Filename    string  `json:"filename"`
	ContentType string  `json:"contentType"`
	SizeBytes   int64   `json:"sizeBytes"`
	Sha256      string  `json:"sha256"`
}

// pdf is a minimal PDF: enough for sniffing.
var pdf = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// form builds a multipart body: fields, then a part "file" (when filename is not "-").
func form(t *testing.T, fields map[string]string, filename string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if filename != "-" {
		h := textproto.MIMEHeader{}
		// The raw UTF-8 name, as browsers send it (not RFC 2047 encoded).
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
		h.Set("Content-Type", "application/pdf") // a claim the server must not trust
		fw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(content)
	}
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func upload(t *testing.T, env *apitest.Env, key, path string, fields map[string]string, filename string, content []byte) *apitest.Response {
	t.Helper()
	body, ct := form(t, fields, filename, content)
	return env.Do(t, apitest.Request{Method: "POST", Path: path, Key: key, Body: body, Header: map[string]string{"Content-Type": ct}})
}

func mustUpload(t *testing.T, env *apitest.Env, key, path, filename string, content []byte) document {
	t.Helper()
	r := upload(t, env, key, path, nil, filename, content)
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var d document
	r.Decode(t, &d)
	return d
}

func mustContact(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	return apitest.Create[struct{ ID string }](t, env, key, "/contacts",
		map[string]any{"type": "private", "firstName": "Jürgen", "lastName": "Größe"}).ID
}

func mustContract(t *testing.T, env *apitest.Env, key, contactID, policy string) string {
	t.Helper()
	var ins struct{ Data []struct{ ID string } }
	env.Do(t, apitest.Request{Path: "/insurers?vuNumber=5501", Key: key}).Decode(t, &ins)
	return apitest.Create[struct{ ID string }](t, env, key, "/contracts", map[string]any{
		"contactId": contactID, "insurerId": ins.Data[0].ID, "policyNumber": policy, "type": "020", "status": "active"}).ID
}

// blobKey reads a document's blob key as the owner (the API never shows it).
func blobKey(t *testing.T, env *apitest.Env, id string) string {
	t.Helper()
	var k string
	if err := env.OwnerDB.QueryRow("SELECT blob_key FROM documents WHERE id = $1", id).Scan(&k); err != nil {
		t.Fatalf("blob key of %s: %v", id, err)
	}
	return k
}

// TestDocuments_DownloadServedType: a download is served under its sniffed type only when that
// type is on the one allow-list of inline-safe formats (httpx.ServedType); an XML document
// (which a browser opened would render as XHTML, script included) and an e-mail (MHTML) go out
// as application/octet-stream, always as an attachment with nosniff. The document keeps its
// sniffed contentType. Catches text/xml and application/xml documents served as such.
func TestDocuments_DownloadServedType(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	// An XHTML script element runs in any XML document a browser renders.
	xhtml := []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Antrag><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(document.domain)</x:script></Antrag>`)
	xmlDoc := []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Antrag><Name>Müller</Name></Antrag>`)
	mail := []byte("From: a@example.com\r\nTo: b@example.com\r\nSubject: Angebot\r\nMessage-ID: <1@example.com>\r\n" +
		"Date: Mon, 4 May 2026 10:00:00 +0200\r\nContent-Type: text/html\r\n\r\n<script>alert(1)</script>\r\n")
	for _, c := range []struct {
		name, file string
		content    []byte
		sniffed    string // the document's contentType, without parameters
		served     string // the download's Content-Type
	}{
		{"pdf", "a.pdf", pdf, "application/pdf", "application/pdf"},
		{"text", "a.txt", []byte("Sehr geehrte Frau Müller,\n"), "text/plain", "text/plain; charset=utf-8"},
		{"xhtml script in xml", "a.xml", xhtml, "text/xml", "application/octet-stream"},
		{"xml", "antrag.xml", xmlDoc, "text/xml", "application/octet-stream"},
		{"e-mail", "a.eml", mail, "message/rfc822", "application/octet-stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", c.file, c.content)
			if base, _, _ := strings.Cut(d.ContentType, ";"); base != c.sniffed {
				t.Errorf("contentType %q, want %q", d.ContentType, c.sniffed)
			}
			r := env.Do(t, apitest.Request{Path: "/documents/" + d.ID + "/content", Key: a.Secret})
			if r.Status != 200 || !bytes.Equal(r.Body, c.content) {
				t.Fatalf("download: %d %q", r.Status, r.Body)
			}
			if got := r.Header.Get("Content-Type"); got != c.served {
				t.Errorf("Content-Type %q, want %q", got, c.served)
			}
			if got := r.Header.Get("Content-Disposition"); !strings.HasPrefix(got, `attachment; filename="`+c.file+`"`) {
				t.Errorf("Content-Disposition %q", got)
			}
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
		})
	}
}

func TestDocuments_UploadAndDownload(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	name := "Übersicht März.pdf"
	sum := sha256.Sum256(pdf)

	r := upload(t, env, a.Secret, "/contacts/"+contact+"/documents", map[string]string{"type": "policy"}, name, pdf)
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var d document
	r.Decode(t, &d)
	if d.ContactID != contact || d.ContractID != nil || d.Type != "policy" || d.Filename != name ||
		d.ContentType != "application/pdf" || d.SizeBytes != int64(len(pdf)) || d.Sha256 != hex.EncodeToString(sum[:]) {
		t.Errorf("document %+v", d)
	}
	if loc := r.Header.Get("Location"); loc != "/api/public/v1/documents/"+d.ID {
		t.Errorf("Location %q", loc)
	}
	if k := blobKey(t, env, d.ID); strings.Contains(k, name) || !strings.HasPrefix(k, "documents/"+a.ID.String()+"/") {
		t.Errorf("blob key %q: server-chosen under the company, never from the caller", k)
	}

	stored := blobPath(t, env, d)
	env.Run(t, []apitest.Case{
		{Name: "get", Key: a.Secret, Path: "/documents/" + d.ID, Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			var got document
			r.Decode(t, &got)
			if got != d && got.ID != d.ID {
				t.Errorf("got %+v", got)
			}
		}},
		{Name: "download with umlauts in the name", Key: a.Secret, Path: "/documents/" + d.ID + "/content", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if !bytes.Equal(r.Body, pdf) {
					t.Errorf("content differs")
				}
				want := `attachment; filename="Uebersicht Maerz.pdf"; filename*=UTF-8''%C3%9Cbersicht%20M%C3%A4rz.pdf`
				if got := r.Header.Get("Content-Disposition"); got != want {
					t.Errorf("Content-Disposition %q, want %q", got, want)
				}
				if r.Header.Get("Content-Type") != "application/pdf" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("headers %v", r.Header)
				}
				if r.Header.Get("ETag") != `"`+d.Sha256+`"` {
					t.Errorf("ETag %q", r.Header.Get("ETag"))
				}
			}},
		{Name: "list by contact", Key: a.Secret, Path: "/documents?contactId=" + contact, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var page apitest.Page[document]
				r.Decode(t, &page)
				if len(page.Data) != 1 || page.Data[0].ID != d.ID {
					t.Errorf("list %s", r.Body)
				}
			}},
		{Name: "list by type excludes", Key: a.Secret, Path: "/documents?contactId=" + contact + "&type=invoice", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if strings.Contains(string(r.Body), d.ID) {
					t.Errorf("list %s", r.Body)
				}
			}},
		{Name: "list with a bad filter", Key: a.Secret, Path: "/documents?contactId=x&type=nope", Status: 422, Problem: "validation_failed",
			Check: func(t *testing.T, r *apitest.Response) {
				if p := r.Problem(t); len(p.Errors) != 2 {
					t.Errorf("errors %+v", p.Errors)
				}
			}},
		{Name: "other company gets 404", Key: b.Secret, Path: "/documents/" + d.ID, Status: 404, Problem: "not_found"},
		{Name: "other company cannot download", Key: b.Secret, Path: "/documents/" + d.ID + "/content", Status: 404},
		{Name: "other company cannot delete", Key: b.Secret, Method: "DELETE", Path: "/documents/" + d.ID, Status: 404},
		{Name: "read scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: "/documents/" + d.ID, Status: 403,
			Problem: "insufficient_scope"},
		{Name: "unknown document", Key: a.Secret, Path: "/documents/0193f3b4-6c1e-7d2a-9f1b-3c5d7e9f1a2b", Status: 404},
		{Name: "malformed id", Key: a.Secret, Path: "/documents/nope", Status: 400},
		{Name: "stale If-Match", Key: a.Secret, Method: "DELETE", Path: "/documents/" + d.ID, Header: map[string]string{"If-Match": `"9"`},
			Status: 412},
		{Name: "delete", Key: a.Secret, Method: "DELETE", Path: "/documents/" + d.ID, Status: 204},
		{Name: "gone", Key: a.Secret, Path: "/documents/" + d.ID, Status: 404},
	})
	if _, err := os.Stat(stored); !os.IsNotExist(err) {
		t.Errorf("blob of the deleted document: %v", err)
	}
	ev := env.Do(t, apitest.Request{Path: "/events?limit=100&types=document.created,document.deleted", Key: a.Secret})
	if ev.Status != 200 || strings.Count(string(ev.Body), d.ID) != 2 || !strings.Contains(string(ev.Body), `"document.deleted"`) {
		t.Errorf("events: %d %s", ev.Status, ev.Body)
	}
}

func TestDocuments_UploadErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	ofB := mustContact(t, env, b.Secret)
	path := "/contacts/" + contact + "/documents"
	exe := append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), make([]byte, 200)...)
	copy(exe[0x3c:], []byte{0x80, 0, 0, 0})
	copy(exe[0x80:], []byte("PE\x00\x00"))

	cases := []struct {
		name     string
		key      string
		path     string
		fields   map[string]string
		filename string
		content  []byte
		status   int
		code     string
	}{
		{"no file part", a.Secret, path, map[string]string{"type": "policy"}, "-", nil, 422, "validation_failed"},
		{"empty file", a.Secret, path, nil, "leer.pdf", []byte{}, 422, "validation_failed"},
		{"unknown type", a.Secret, path, map[string]string{"type": "secret"}, "a.pdf", pdf, 422, "validation_failed"},
		{"unknown field", a.Secret, path, map[string]string{"contactId": contact}, "a.pdf", pdf, 422, "validation_failed"},
		{"an executable named .pdf", a.Secret, path, nil, "rechnung.pdf", exe, 415, "document_type_not_allowed"},
		{"HTML named .pdf", a.Secret, path, nil, "x.pdf", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), 415,
			"document_type_not_allowed"},
		{"unknown contact", a.Secret, "/contacts/0193f3b4-6c1e-7d2a-9f1b-3c5d7e9f1a2b/documents", nil, "a.pdf", pdf, 404, "not_found"},
		{"another company's contact", a.Secret, "/contacts/" + ofB + "/documents", nil, "a.pdf", pdf, 404, "not_found"},
		{"unknown contract", a.Secret, "/contracts/0193f3b4-6c1e-7d2a-9f1b-3c5d7e9f1a2b/documents", nil, "a.pdf", pdf, 404, "not_found"},
		{"write scope missing", a.KeyWithScopes(t, "documents:read"), path, nil, "a.pdf", pdf, 403, "insufficient_scope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := upload(t, env, c.key, c.path, c.fields, c.filename, c.content)
			if r.Status != c.status || r.Problem(t).Code != c.code {
				t.Fatalf("%d %s, want %d %s", r.Status, r.Body, c.status, c.code)
			}
		})
	}
	t.Run("not multipart", func(t *testing.T) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: path, Key: a.Secret, Body: map[string]any{"file": "x"}})
		if r.Status != 415 || r.Problem(t).Code != "unsupported_media_type" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("over 10 MB", func(t *testing.T) {
		big := append(append([]byte{}, pdf...), make([]byte, 10_000_001-len(pdf))...)
		if r := upload(t, env, a.Secret, path, nil, "genau.pdf", big[:10_000_000]); r.Status != 201 {
			t.Fatalf("10,000,000 bytes: %d %s", r.Status, r.Body)
		}
		r := upload(t, env, a.Secret, path, nil, "gross.pdf", big)
		if r.Status != 413 || r.Problem(t).Code != "payload_too_large" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("nothing stored by refused uploads", func(t *testing.T) {
		var n int
		if err := env.OwnerDB.QueryRow("SELECT count(*) FROM documents WHERE company_id = $1", a.ID).Scan(&n); err != nil || n != 1 {
			t.Fatalf("documents: %d %v, want the one of 10,000,000 bytes", n, err)
		}
		if got := blobCount(t, env, a.ID.String()); got != 1 {
			t.Errorf("%d blobs left by refused uploads", got)
		}
	})
}

// TestDocuments_SniffedType: the stored and served type is the content's, whatever the client
// claimed; control and bidi characters leave the name.
func TestDocuments_SniffedType(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	d := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "\u200Bnotiz\u202Efdp.txt", []byte("Hallo Welt, schöne Grüße\n"))
	if d.ContentType != "text/plain; charset=utf-8" {
		t.Errorf("contentType %q", d.ContentType)
	}
	if d.Filename != "notizfdp.txt" {
		t.Errorf("filename %q", d.Filename)
	}
	r := env.Do(t, apitest.Request{Path: "/documents/" + d.ID + "/content", Key: a.Secret})
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("download: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
}

// TestDocuments_Corrupted: a blob changed or lost in storage is never served: a lost one and
// one of another size are 502 before any byte; one of the same size with other bytes is cut
// short before its last byte (TestDocuments_DownloadStreamed); blob storage failing is 503.
func TestDocuments_Corrupted(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	changed := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "a.pdf", pdf)
	lost := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "b.pdf", pdf)
	broken := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "c.pdf", pdf)
	bad := bytes.Replace(pdf, []byte("1.4"), []byte("1.45"), 1)
	if err := os.WriteFile(blobPath(t, env, changed), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(blobPath(t, env, lost)); err != nil {
		t.Fatal(err)
	}
	// A blob storage that fails to open the blob (not "not found"): a symlink loop in its place.
	p := blobPath(t, env, broken)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(p), p); err != nil {
		t.Fatal(err)
	}
	env.Run(t, []apitest.Case{
		{Name: "changed size", Key: a.Secret, Path: "/documents/" + changed.ID + "/content", Status: 502, Problem: "content_corrupted"},
		{Name: "lost", Key: a.Secret, Path: "/documents/" + lost.ID + "/content", Status: 502, Problem: "content_missing"},
		{Name: "storage fails", Key: a.Secret, Path: "/documents/" + broken.ID + "/content", Status: 503, Problem: "unavailable",
			Check: func(t *testing.T, r *apitest.Response) {
				if r.Header.Get("Retry-After") == "" {
					t.Errorf("no Retry-After")
				}
			}},
		{Name: "a lost one can be deleted", Key: a.Secret, Method: "DELETE", Path: "/documents/" + lost.ID, Status: 204},
	})
}

// TestDocuments_DownloadStreamed: the content is streamed from blob storage with its length,
// 304 for its ETag; content changed in storage at the same size is never delivered whole: the
// response ends before its last byte (over a real connection, as a client sees it).
func TestDocuments_DownloadStreamed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	big := append(append([]byte{}, pdf...), bytes.Repeat([]byte("% padding line of a larger document\n"), 200_000)...) // 7.2 MB
	d := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "groß.pdf", big)
	same := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "same.pdf", pdf)
	if err := os.WriteFile(blobPath(t, env, same), bytes.Replace(pdf, []byte("1.4"), []byte("1.5"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	base := env.Listen(t)
	get := func(id string, h map[string]string) (*http.Response, []byte, error) {
		req, _ := http.NewRequest("GET", base+app.V1Prefix+"/documents/"+id+"/content", nil)
		req.Header.Set("Authorization", "Bearer "+a.Secret)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp, body, err
	}

	resp, body, err := get(d.ID, nil)
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, big) {
		t.Fatalf("download: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}
	if resp.ContentLength != int64(len(big)) || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="gross.pdf"; filename*=UTF-8''gro%C3%9F.pdf` {
		t.Errorf("headers: length %d, %v", resp.ContentLength, resp.Header)
	}
	resp, body, err = get(d.ID, map[string]string{"If-None-Match": `"` + d.Sha256 + `"`})
	if err != nil || resp.StatusCode != 304 || len(body) != 0 {
		t.Errorf("If-None-Match: %d %q %v", resp.StatusCode, body, err)
	}

	// The connection closes before the last byte: a small file before any byte (the client
	// sees no response), a larger one after its first bytes (the body ends early).
	resp, body, err = get(same.ID, nil)
	if err == nil {
		t.Errorf("changed content: %d, %d of %d bytes, no error: want the response cut short", resp.StatusCode, len(body), len(pdf))
	}
	if len(body) >= len(pdf) {
		t.Errorf("the changed content was delivered whole")
	}
}

// TestDocuments_Contract: a contract's document belongs to the contract's contact, follows the
// contract to another contact, and stays with the contact when the contract is deleted.
func TestDocuments_Contract(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	other := mustContact(t, env, a.Secret)
	contract := mustContract(t, env, a.Secret, contact, "D-1")
	d := mustUpload(t, env, a.Secret, "/contracts/"+contract+"/documents", "Police.pdf", pdf)
	if d.ContactID != contact || d.ContractID == nil || *d.ContractID != contract {
		t.Fatalf("document %+v", d)
	}
	body, ct := form(t, nil, "x.pdf", pdf)
	env.Run(t, []apitest.Case{
		{Name: "list by contract", Key: a.Secret, Path: "/documents?contractId=" + contract, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				if !strings.Contains(string(r.Body), d.ID) {
					t.Errorf("list %s", r.Body)
				}
			}},
		{Name: "other company cannot upload to the contract", Key: b.Secret, Method: "POST", Path: "/contracts/" + contract + "/documents",
			Body: body, Header: map[string]string{"Content-Type": ct}, Status: 404, Problem: "not_found"},
		{Name: "a broken multipart body", Key: a.Secret, Method: "POST", Path: "/contracts/" + contract + "/documents",
			Body: "x", Header: map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, Status: 400, Problem: "bad_request"},
	})
	// The contract moves to another contact: its document follows (visibility with it).
	if r := env.Do(t, apitest.Request{Method: "PATCH", Path: "/contracts/" + contract, Key: a.Secret,
		Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": "*"},
		Body:   map[string]any{"contactId": other}}); r.Status != 200 {
		t.Fatalf("move the contract: %d %s", r.Status, r.Body)
	}
	var moved document
	env.Do(t, apitest.Request{Path: "/documents/" + d.ID, Key: a.Secret}).Decode(t, &moved)
	if moved.ContactID != other {
		t.Errorf("document's contact %s after the contract moved to %s", moved.ContactID, other)
	}
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contracts/" + contract, Key: a.Secret}); r.Status != 204 {
		t.Fatalf("delete contract: %d %s", r.Status, r.Body)
	}
	var got document
	r := env.Do(t, apitest.Request{Path: "/documents/" + d.ID, Key: a.Secret})
	r.Decode(t, &got)
	if r.Status != 200 || got.ContractID != nil {
		t.Errorf("after the contract's deletion: %d %s", r.Status, r.Body)
	}
}

// TestDocuments_ContactDeleteRemovesBlobs: deleting a contact deletes its documents (also a
// contract's) and, after the commit, their blobs; the event feed has no document.deleted.
func TestDocuments_ContactDeleteRemovesBlobs(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	keep := mustContact(t, env, a.Secret)
	contract := mustContract(t, env, a.Secret, contact, "D-2")
	d1 := mustUpload(t, env, a.Secret, "/contacts/"+contact+"/documents", "a.pdf", pdf)
	d2 := mustUpload(t, env, a.Secret, "/contracts/"+contract+"/documents", "b.pdf", pdf)
	d3 := mustUpload(t, env, a.Secret, "/contacts/"+keep+"/documents", "c.pdf", pdf)
	paths := []string{blobPath(t, env, d1), blobPath(t, env, d2)}
	keepPath := blobPath(t, env, d3)
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/contacts/" + contact, Key: a.Secret,
		Header: map[string]string{"If-Match": "*"}}); r.Status != 204 {
		t.Fatalf("delete contact: %d %s", r.Status, r.Body)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("blob %s of the deleted contact: %v", p, err)
		}
	}
	if _, err := os.Stat(keepPath); err != nil {
		t.Errorf("another contact's blob: %v", err)
	}
	for _, id := range []string{d1.ID, d2.ID} {
		if r := env.Do(t, apitest.Request{Path: "/documents/" + id, Key: a.Secret}); r.Status != 404 {
			t.Errorf("document %s after its contact's deletion: %d", id, r.Status)
		}
	}
}

// TestDocuments_IdempotentUpload: an upload sent again with the same Idempotency-Key replays
// the answer and stores nothing more.
func TestDocuments_IdempotentUpload(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	contract := mustContract(t, env, a.Secret, contact, "D-3")
	body, ct := form(t, nil, "a.pdf", pdf)
	h := map[string]string{"Idempotency-Key": "doc-1", "Content-Type": ct}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contracts/" + contract + "/documents", Key: a.Secret, Body: body, Header: h})
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	r2 := env.Do(t, apitest.Request{Method: "POST", Path: "/contracts/" + contract + "/documents", Key: a.Secret, Body: body, Header: h})
	if r2.Status != 201 || r2.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, r2.Body) {
		t.Errorf("replay: %d %v %s", r2.Status, r2.Header, r2.Body)
	}
	var n int
	if err := env.OwnerDB.QueryRow("SELECT count(*) FROM documents WHERE company_id = $1", a.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("documents after a replay: %d %v", n, err)
	}
	if got := blobCount(t, env, a.ID.String()); got != 1 {
		t.Errorf("%d blobs after a replay, want 1", got)
	}
}

// TestDocuments_RolledBackUploadLeavesNoBlob: when the request's transaction fails after the
// blob was written (here a trigger raising a serialization failure for one file name, which
// the server retries until its budget ends), every attempt's blob is removed with its rollback.
func TestDocuments_RolledBackUploadLeavesNoBlob(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	contact := mustContact(t, env, a.Secret)
	for _, q := range []string{
		`CREATE OR REPLACE FUNCTION test_fail_document() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'simulated failure' USING ERRCODE = '40001'; END $$`,
		`CREATE TRIGGER test_fail_document BEFORE INSERT ON documents FOR EACH ROW
		WHEN (NEW.filename = 'rollback-me.pdf') EXECUTE FUNCTION test_fail_document()`,
	} {
		if _, err := env.OwnerDB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := upload(t, env, a.Secret, "/contacts/"+contact+"/documents", nil, "rollback-me.pdf", pdf)
	if r.Status != 503 || r.Problem(t).Code != "unavailable" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if got := blobCount(t, env, a.ID.String()); got != 0 {
		t.Errorf("%d blobs left by rolled-back uploads", got)
	}
}
