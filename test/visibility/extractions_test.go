package visibility

import (
	"context"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestVisibility_Extractions is the matrix over the extraction endpoints (issue 25): an
// extraction is exactly as visible as its document's contact. A credential that may not see
// A's contact gets 404 on reading and applying the extraction and on starting one from the
// contact's document; one that sees it reads it.
// Catches: extractions read through ent without the contact's visibility rule, or the start
// looking the document up company-wide (a charge for a document the caller cannot see).
func TestVisibility_Extractions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if _, err := w.env.Ops.GrantPoints(context.Background(), w.co.ID, 5, "test"); err != nil {
		t.Fatal(err)
	}
	ofA := w.createContact(t, w.co.Secret, map[string]any{"type": "private", "firstName": "Geheim", "lastName": "Police",
		"ownerId": w.agentA.ID})
	r := w.uploadDoc(t, w.co.Secret, "/contacts/"+ofA.ID+"/documents")
	if r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var doc struct{ ID string }
	r.Decode(t, &doc)
	r = w.env.Do(t, apitest.Request{Method: "POST", Path: "/documents/" + doc.ID + "/extractions", Key: w.co.Secret, Body: map[string]any{}})
	if r.Status != 202 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	var ex struct{ ID string }
	r.Decode(t, &ex)

	for name, key := range w.keys {
		t.Run(name, func(t *testing.T) {
			want := 404
			if w.seesA[name] {
				want = 200
			}
			g := w.env.Do(t, apitest.Request{Path: "/extractions/" + ex.ID, Key: key})
			if g.Status != want {
				t.Errorf("GET extraction: %d, want %d", g.Status, want)
			}
			if want == 404 {
				if strings.Contains(string(g.Body), doc.ID) {
					t.Errorf("404 body names the document: %s", g.Body)
				}
				s := w.env.Do(t, apitest.Request{Method: "POST", Path: "/documents/" + doc.ID + "/extractions", Key: key, Body: map[string]any{}})
				if s.Status != 404 {
					t.Errorf("start on A's document: %d, want 404", s.Status)
				}
				a := w.env.Do(t, apitest.Request{Method: "POST", Path: "/extractions/" + ex.ID + "/apply", Key: key,
					Body: map[string]any{"fields": []string{"policyNumber"}, "values": map[string]any{"policyNumber": "X-1"}}})
				if a.Status != 404 {
					t.Errorf("apply A's extraction: %d, want 404", a.Status)
				}
			}
		})
	}
}
