package visibility

import (
	"bytes"
	"mime/multipart"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// uploadDoc posts a PDF to path as key.
func (w *world) uploadDoc(t *testing.T, key, path string) *apitest.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "Geheim.pdf")
	_, _ = fw.Write([]byte("%PDF-1.4\n%%EOF\n"))
	_ = mw.Close()
	return w.env.Do(t, apitest.Request{Method: "POST", Path: path, Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
}

// TestVisibility_Documents is the matrix over the document endpoints: a document is exactly as
// visible as its contact. A credential that may not see A's contact gets 404 on the document,
// its content and its deletion, cannot upload to the contact, and lists and the feed do not
// carry it.
func TestVisibility_Documents(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ofA := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Akte",
		"ownerId": w.agentA.ID})
	r := w.uploadDoc(t, w.co.Secret, "/contacts/"+ofA.ID+"/documents")
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var doc struct{ ID string }
	r.Decode(t, &doc)

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			want := 404
			if w.seesA[name] {
				want = 200
			}
			for _, p := range []string{"/documents/" + doc.ID, "/documents/" + doc.ID + "/content"} {
				r := w.env.Do(t, apitest.Request{Path: p, Key: key})
				if r.Status != want {
					t.Errorf("GET %s: %d, want %d", p, r.Status, want)
				}
				if want == 404 && strings.Contains(string(r.Body), "Geheim") {
					t.Errorf("404 body names the document: %s", r.Body)
				}
			}
			l := w.env.Do(t, apitest.Request{Path: "/documents?limit=200", Key: key})
			if l.Status != 200 || strings.Contains(string(l.Body), doc.ID) != w.seesA[name] {
				t.Errorf("list: %d, has A's document %v, want %v", l.Status, strings.Contains(string(l.Body), doc.ID), w.seesA[name])
			}
			if evs := w.eventSubjects(t, key, "document.created"); slices.Contains(evs, doc.ID) != w.seesA[name] {
				t.Errorf("feed has document.created: %v, want %v", slices.Contains(evs, doc.ID), w.seesA[name])
			}
			if want == 404 {
				if r := w.uploadDoc(t, key, "/contacts/"+ofA.ID+"/documents"); r.Status != 404 {
					t.Errorf("upload to A's contact: %d, want 404", r.Status)
				}
				if r := w.env.Do(t, apitest.Request{Method: "DELETE", Path: "/documents/" + doc.ID, Key: key}); r.Status != 404 {
					t.Errorf("DELETE A's document: %d, want 404", r.Status)
				}
			}
		})
	}
	// The owner may delete it; then it is gone for everyone.
	if r := w.env.Do(t, apitest.Request{Method: "DELETE", Path: "/documents/" + doc.ID, Key: w.keys["agent A key"]}); r.Status != 204 {
		t.Errorf("agent A deletes: %d %s", r.Status, r.Body)
	}
}
