package isolation

import (
	"context"
	"database/sql"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestIsolation_ContactSubResources probes every sub-resource endpoint of a contact of company
// B with company A's keys: each answers 404, and B's data stays as it was.
func TestIsolation_ContactSubResources(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	insert := func(company uuid.UUID, last string) string {
		id := uuid.Must(uuid.NewV7())
		err := env.Pinned(context.Background(), company, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO contacts (tags, labels, custom_fields, groups, sensitive, sort_name, search_text, id, company_id, type, first_name, last_name, company_name, version, created_at, updated_at)
				VALUES ('[]', '[]', '{}', '{}', '{}', '', '', $1, $2, 'private', 'B', $3, '', 1, now(), now())`, id, company, last)
			return err
		})
		if err != nil {
			t.Fatalf("insert contact: %v", err)
		}
		return id.String()
	}
	bx, by, ax := insert(b.ID, "X"), insert(b.ID, "Y"), insert(a.ID, "A")
	post := func(path string, body any, v any) {
		r := env.Do(t, apitest.Request{Method: "POST", Path: path, Key: b.Secret, Body: body})
		if r.Status != 201 {
			t.Fatalf("B: POST %s: %d %s", path, r.Status, r.Body)
		}
		r.Decode(t, v)
	}
	var ph, rel, note struct{ ID string }
	c := "/contacts/" + bx
	post(c+"/phones", map[string]any{"number": "030 1234567"}, &ph)
	post(c+"/relationships", map[string]any{"relatedContactId": by, "role": "partner"}, &rel)
	post(c+"/notes", map[string]any{"content": "B's note"}, &note)
	if r := env.Do(t, apitest.Request{Method: "PUT", Path: c + "/finance", Key: b.Secret, Body: map[string]any{}}); r.Status != 200 {
		t.Fatalf("B: PUT finance: %d %s", r.Status, r.Body)
	}
	var cases []apitest.Case
	for _, key := range []struct{ name, key string }{{"A", a.Secret}, {"A's sandbox", a.TestSecret}, {"B's sandbox", b.TestSecret}} {
		for _, p := range []struct {
			method, path string
			body         any
		}{
			{"POST", c + "/phones", map[string]any{"number": "040 1234567"}},
			{"PATCH", c + "/phones/" + ph.ID, map[string]any{"type": "fax"}},
			{"DELETE", c + "/phones/" + ph.ID, nil},
			{"GET", c + "/relationships", nil},
			{"POST", c + "/relationships", map[string]any{"relatedContactId": by, "role": "child"}},
			{"POST", "/contacts/" + ax + "/relationships", map[string]any{"relatedContactId": bx, "role": "child"}},
			{"DELETE", c + "/relationships/" + rel.ID, nil},
			{"GET", c + "/finance", nil},
			{"PUT", c + "/finance", map[string]any{"income": []any{}}},
			{"GET", c + "/activities", nil},
			{"POST", c + "/notes", map[string]any{"content": "x"}},
			{"GET", c + "/notes/" + note.ID, nil},
			{"PATCH", c + "/notes/" + note.ID, map[string]any{"content": "x"}},
			{"DELETE", c + "/notes/" + note.ID, nil},
		} {
			if key.name != "A" && p.path == "/contacts/"+ax+"/relationships" {
				continue // A's contact is unknown to the sandbox keys anyway
			}
			cases = append(cases, apitest.Case{Name: key.name + " " + p.method + " " + p.path, Key: key.key, Method: p.method,
				Path: p.path, Body: p.body, Status: 404, Problem: "not_found"})
		}
	}
	env.Run(t, cases)
	var n int
	err := env.Pinned(context.Background(), b.ID, func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT (SELECT count(*) FROM contact_phones WHERE contact_id = $1 AND type <> 'fax')
			+ (SELECT count(*) FROM contact_relationships WHERE contact_id = $1)
			+ (SELECT count(*) FROM contact_activities WHERE contact_id = $1 AND kind = 'note' AND content = 'B''s note')
			+ (SELECT count(*) FROM contact_finances WHERE contact_id = $1)`, bx).Scan(&n)
	})
	if err != nil || n != 4 {
		t.Errorf("B's sub-resources after A's probes: %d of 4 intact (%v)", n, err)
	}
}
