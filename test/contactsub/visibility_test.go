package contactsub

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContactSub_Visibility is issue 8's matrix for the sub-resources: every endpoint on a
// contact of agent A, for every kind of credential. Who may not see the contact gets 404 and
// no trace of it (name, note, numbers) in any body.
func TestContactSub_Visibility(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co, other := env.NewCompany(t), env.NewCompany(t)
	agentA, agentB := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	agentD, agentE := env.NewUser(t, co, "agent"), env.NewUser(t, co, "agent")
	manager := env.NewUser(t, co, "manager")
	co.Delegate(t, agentA.ID, agentD.ID, nil)
	past := time.Now().Add(-time.Hour)
	co.Delegate(t, agentA.ID, agentE.ID, &past)
	keys := map[string]string{
		"admin user key":          co.UserKey(t, co.Admin),
		"manager key":             co.UserKey(t, manager),
		"agent A key":             co.UserKey(t, agentA),
		"agent B key":             co.UserKey(t, agentB),
		"agent B with delegation": co.UserKey(t, agentD),
		"agent B after expiry":    co.UserKey(t, agentE),
		"company key":             co.Secret,
		"other company's key":     other.Secret,
		"sandbox key":             co.TestSecret,
		"agent A's sandbox key":   co.Key(t, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvTest, UserID: &agentA.ID}).Secret,
	}
	sees := map[string]bool{"admin user key": true, "manager key": true, "agent A key": true,
		"agent B with delegation": true, "company key": true}

	x := insertContact(t, env, co.ID, "private", "Geheimnisvoll", &agentA.ID)
	y := insertContact(t, env, co.ID, "private", "Partnerin", &agentA.ID)
	z := insertContact(t, env, co.ID, "private", "Fremdkontakt", &agentB.ID)
	cx := "/contacts/" + x
	must(t, do(t, env, "POST", cx+"/relationships", co.Secret, map[string]any{"relatedContactId": y, "role": "partner"}), 201)
	must(t, do(t, env, "POST", cx+"/relationships", co.Secret, map[string]any{"relatedContactId": z, "role": "employer", "position": "Sekretär"}), 201)
	must(t, do(t, env, "PUT", cx+"/finance", co.Secret, map[string]any{"income": []map[string]any{{"type": "salary", "amount": "4711.89"}}}), 200)
	var shared activity
	must(t, do(t, env, "POST", cx+"/notes", co.Secret, map[string]any{"content": "streng vertraulich"}), 201).Decode(t, &shared)
	secrets := []string{"Geheimnisvoll", "streng vertraulich", "4711.89", "Partnerin"}

	i := 0
	for name, key := range keys {
		i++
		t.Run(name, func(t *testing.T) {
			var own activity
			must(t, do(t, env, "POST", cx+"/notes", co.Secret, map[string]any{"content": "für " + name}), 201).Decode(t, &own)
			var ph phone
			must(t, do(t, env, "POST", cx+"/phones", co.Secret, map[string]any{"number": fmt.Sprintf("+49 30 55500%02d", i)}), 201).Decode(t, &ph)
			ok := func(status int) int {
				if sees[name] {
					return status
				}
				return 404
			}
			cases := []struct {
				method, path string
				body         any
				status       int
				also         int // another status allowed (a relation made by an earlier credential)
			}{
				{"GET", cx + "/relationships", nil, ok(200), 0},
				{"GET", cx + "/finance", nil, ok(200), 0},
				{"PUT", cx + "/finance", map[string]any{"assets": []any{}}, ok(200), 0},
				{"GET", cx + "/activities", nil, ok(200), 0},
				{"GET", cx + "/notes/" + shared.ID, nil, ok(200), 0},
				{"POST", cx + "/notes", map[string]any{"content": "von " + name}, ok(201), 0},
				{"PATCH", cx + "/notes/" + own.ID, map[string]any{"content": "geändert"}, ok(200), 0},
				{"DELETE", cx + "/notes/" + own.ID, nil, ok(204), 0},
				{"PATCH", cx + "/phones/" + ph.ID, map[string]any{"type": "fax"}, ok(200), 0},
				{"DELETE", cx + "/phones/" + ph.ID, nil, ok(204), 0},
				{"POST", cx + "/phones", map[string]any{"number": fmt.Sprintf("+49 40 55500%02d", i)}, ok(201), 0},
				{"POST", "/contacts/" + y + "/relationships", map[string]any{"relatedContactId": x, "role": "parent"}, ok(201), ok(409)},
				{"DELETE", cx + "/relationships/" + shared.ID, nil, 404, 0},
			}
			for _, c := range cases {
				r := do(t, env, c.method, c.path, key, c.body)
				if r.Status == 201 && strings.HasSuffix(c.path, "/phones") {
					var p phone
					r.Decode(t, &p)
					must(t, do(t, env, "DELETE", c.path+"/"+p.ID, co.Secret, nil), 204)
				}
				if r.Status != c.status && (c.also == 0 || r.Status != c.also) {
					t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.Status, c.status, r.Body)
				}
				if r.Status == 404 {
					for _, s := range secrets {
						if strings.Contains(string(r.Body), s) {
							t.Errorf("%s %s: the 404 names %q", c.method, c.path, s)
						}
					}
				}
			}
		})
	}

	// A relationship to a contact the credential may not see is left out of the list, and
	// cannot be deleted.
	relatedIDs := func(key, contact string) []string {
		var page struct{ Data []relationship }
		must(t, do(t, env, "GET", "/contacts/"+contact+"/relationships", key, nil), 200).Decode(t, &page)
		var ids []string
		for _, r := range page.Data {
			ids = append(ids, r.RelatedContactID)
		}
		return ids
	}
	if got := relatedIDs(keys["agent A key"], x); len(got) != 2 || strings.Contains(strings.Join(got, ","), z) {
		t.Errorf("agent A sees %v among x's relationships, want y twice (partner, child) and never z", got)
	}
	if got := relatedIDs(keys["manager key"], x); len(got) != 3 {
		t.Errorf("the manager sees %d of x's relationships, want 3", len(got))
	}
	if got := relatedIDs(keys["agent B key"], z); len(got) != 0 {
		t.Errorf("agent B sees %v among z's relationships: x is agent A's", got)
	}
	var zRel struct{ Data []relationship }
	must(t, do(t, env, "GET", "/contacts/"+z+"/relationships", co.Secret, nil), 200).Decode(t, &zRel)
	must(t, do(t, env, "DELETE", "/contacts/"+z+"/relationships/"+zRel.Data[0].ID, keys["agent B key"], nil), 404)
	must(t, do(t, env, "POST", "/contacts/"+z+"/relationships", keys["agent B key"], map[string]any{"relatedContactId": y, "role": "partner"}), 404)

	// The feed of agent B carries no note or relationship event about x; agent A's does.
	about := func(key string) map[string]int {
		var page struct {
			Data []struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
		}
		must(t, do(t, env, "GET", "/events?limit=200&types=note.created,note.updated,note.deleted,relationship.created,contact.updated", key, nil), 200).Decode(t, &page)
		n := map[string]int{}
		for _, e := range page.Data {
			var d struct{ ContactID, ID string }
			_ = json.Unmarshal(e.Data, &d)
			if d.ContactID == x || d.ID == x {
				n[e.Type]++
			}
		}
		return n
	}
	if n := about(keys["agent B key"]); len(n) != 0 {
		t.Errorf("agent B's feed holds events about x: %v", n)
	}
	if n := about(keys["agent A key"]); n["note.created"] == 0 || n["relationship.created"] == 0 || n["contact.updated"] == 0 {
		t.Errorf("agent A's feed about x: %v, want notes, relationships and phone changes", n)
	}

	// Row-level security alone: pinned as agent B without ent, nothing of x is there.
	err := env.Pinned(context.Background(), co.ID, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`SELECT set_config('app.user_id', $1, true), set_config('app.visibility', 'own_and_delegated', true)`, agentB.ID.String()); err != nil {
			return err
		}
		for _, q := range []string{"contact_activities WHERE contact_id = $1", "contact_finances WHERE contact_id = $1",
			"contact_relationships WHERE contact_id = $1 OR related_contact_id = $1", "contact_phones WHERE contact_id = $1"} {
			var n int
			if err := tx.QueryRow(`SELECT count(*) FROM `+q, x).Scan(&n); err != nil {
				return err
			}
			table := strings.Fields(q)[0]
			if n != 0 {
				t.Errorf("RLS: agent B counts %d rows of x in %s", n, table)
			}
		}
		res, err := tx.Exec(`UPDATE contact_activities SET content = 'pwned' WHERE contact_id = $1`, x)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 0 {
			t.Errorf("RLS: agent B updated %d of x's activities", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
