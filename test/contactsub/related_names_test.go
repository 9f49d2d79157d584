package contactsub

import (
	"context"
	"database/sql"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/migrations"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// relationshipEntry is the content of the one system entry of event in key's view of the
// contact's timeline.
func relationshipEntry(t *testing.T, env *apitest.Env, key, contact, event string) string {
	t.Helper()
	var found []string
	for _, a := range timeline(t, env, key, contact, "?filter=system") {
		if a.Event != nil && *a.Event == event {
			found = append(found, a.Content)
		}
	}
	if len(found) != 1 {
		t.Fatalf("timeline of %s: %d entries %s, want 1: %v", contact, len(found), event, found)
	}
	return found[0]
}

// TestContactSub_RelationshipEntriesNameVisibleContactsOnly (issue 20 item 4): the timeline entry
// "Beziehung angelegt: <name>" showed a colleague's customer's name to everyone who reads the
// other contact's timeline, and relationship.created's relatedContact did in the feed. The entry
// names the other contact only for a reader who may see it (its id for anyone else), rendered
// when read, so a handover or a rename shows; the event reaches only who sees both contacts.
func TestContactSub_RelationshipEntriesNameVisibleContactsOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	keyA, keyB := a.UserKey(t, agentA), a.UserKey(t, agentB)
	x := insertContact(t, env, a.ID, "private", "Xanthos", &agentA.ID)
	y := insertContact(t, env, a.ID, "private", "Ypsilon", &agentB.ID)
	var rel relationship
	must(t, do(t, env, "POST", "/contacts/"+x+"/relationships", a.Secret, map[string]any{"relatedContactId": y, "role": "partner"}), 201).Decode(t, &rel)

	if got := relationshipEntry(t, env, keyA, x, "relationship.created"); strings.Contains(got, "Ypsilon") || got != "Beziehung angelegt: Kontakt "+y+" (partner)" {
		t.Errorf("agent A reads in its customer's timeline %q: the colleague's customer by name", got)
	}
	if got := relationshipEntry(t, env, keyB, y, "relationship.created"); got != "Beziehung angelegt: Kontakt "+x+" (partner)" {
		t.Errorf("agent B reads %q", got)
	}
	if got := relationshipEntry(t, env, a.Secret, x, "relationship.created"); got != "Beziehung angelegt: Ada Ypsilon (partner)" {
		t.Errorf("the company key reads %q, want the name", got)
	}
	for name, key := range map[string]string{"agent A": keyA, "agent B": keyB} {
		r := must(t, do(t, env, "GET", "/events?types=relationship.created", key, nil), 200)
		if strings.Contains(string(r.Body), rel.ID) || strings.Contains(string(r.Body), "Ypsilon") || strings.Contains(string(r.Body), "Xanthos") {
			t.Errorf("%s's feed has the relationship of contacts it does not both see: %s", name, r.Body)
		}
	}
	if r := must(t, do(t, env, "GET", "/events?types=relationship.created", a.Secret, nil), 200); !strings.Contains(string(r.Body), "Ypsilon") {
		t.Errorf("the company's feed lacks the relationship: %s", r.Body)
	}

	// Rendered when read: once A may see Y (a handover), A's entry names it, as it is named now.
	must(t, env.Do(t, apitest.Request{Method: "PATCH", Path: "/contacts/" + y, Key: a.Secret, Body: map[string]any{"ownerId": agentA.ID, "lastName": "Ypsilanti"},
		Header: map[string]string{"Content-Type": "application/merge-patch+json", "If-Match": "*"}}), 200)
	if got := relationshipEntry(t, env, keyA, x, "relationship.created"); got != "Beziehung angelegt: Ada Ypsilanti (partner)" {
		t.Errorf("after the handover agent A reads %q", got)
	}
	must(t, do(t, env, "DELETE", "/contacts/"+x+"/relationships/"+rel.ID, keyA, nil), 204)
	if got := relationshipEntry(t, env, keyA, x, "relationship.deleted"); got != "Beziehung entfernt: Ada Ypsilanti (partner)" {
		t.Errorf("agent A reads %q", got)
	}
	if got := relationshipEntry(t, env, a.Secret, y, "relationship.deleted"); got != "Beziehung entfernt: Ada Xanthos (partner)" {
		t.Errorf("the company key reads %q in the other timeline", got)
	}
}

// TestContactSub_OldRelationshipEntriesLoseNames: the migration rewrites the entries written
// before it: named through the relationship that still exists, else through the one contact of
// the company with that name; an entry naming nobody it can tell loses the name.
func TestContactSub_OldRelationshipEntriesLoseNames(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agentA, agentB := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	keyA := a.UserKey(t, agentA)
	x := insertContact(t, env, a.ID, "private", "Altbestand", &agentA.ID)
	y := insertContact(t, env, a.ID, "private", "Beziehung", &agentB.ID)
	z := insertContact(t, env, a.ID, "private", "Eindeutig", &agentB.ID)
	insertContact(t, env, a.ID, "private", "Doppelt", &agentB.ID)
	insertContact(t, env, a.ID, "private", "Doppelt", &agentB.ID)
	ctx := context.Background()
	err := env.Operator(ctx, a.ID, func(tx *sql.Tx) error {
		pair := uuid.New()
		if _, err := tx.Exec(`INSERT INTO contact_relationships (id, company_id, contact_id, related_contact_id, role, position, pair_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, 'child', '', $5, now(), now())`, uuid.New(), a.ID, x, y, pair); err != nil {
			return err
		}
		for i, c := range []string{"Beziehung angelegt: Ada Beziehung (child)", "Beziehung angelegt: Ada Eindeutig (partner)",
			"Beziehung entfernt: Ada Doppelt (partner)", "Beziehung angelegt: Ada Gelöscht (parent)"} {
			if _, err := tx.Exec(`INSERT INTO contact_activities (id, company_id, contact_id, kind, event, content, occurred_at, created_at, updated_at, version, external_references)
				VALUES ($1, $2, $3, 'system', $4, $5, now() - make_interval(secs => $6), now(), now(), 1, '[]')`,
				uuid.New(), a.ID, x, map[bool]string{true: "relationship.deleted", false: "relationship.created"}[strings.HasPrefix(c, "Beziehung entfernt")], c, i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("insert old entries: %v", err)
	}
	runUp(t, env, "20261127100300_activity_related_names.sql")

	var got []string
	for _, e := range timeline(t, env, keyA, x, "?filter=system") {
		got = append(got, e.Content)
	}
	want := []string{"Beziehung angelegt: Kontakt " + y + " (child)", "Beziehung angelegt: Kontakt " + z + " (partner)",
		"Beziehung entfernt: ein Kontakt (partner)", "Beziehung angelegt: ein Kontakt (parent)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("agent A's timeline after the migration:\n got %q\nwant %q", got, want)
	}
	got = nil
	for _, e := range timeline(t, env, a.Secret, x, "?filter=system") {
		got = append(got, e.Content)
	}
	if !strings.Contains(strings.Join(got, "|"), "Ada Beziehung (child)") || !strings.Contains(strings.Join(got, "|"), "Ada Eindeutig (partner)") {
		t.Errorf("the company key's timeline after the migration: %q", got)
	}
}

// runUp runs the Up part of migration file once more as the owner: its statements only touch
// rows written the old way.
func runUp(t *testing.T, env *apitest.Env, file string) {
	t.Helper()
	b, err := fs.ReadFile(migrations.FS, file)
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(b), "-- +goose Down")
	tx, err := env.OwnerDB.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(up); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
