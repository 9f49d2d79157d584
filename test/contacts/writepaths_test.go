package contacts

import (
	"context"
	"database/sql"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContacts_EveryWritePathIsSearchable writes a contact through each path that writes one and
// finds it by q (the term in capitals: folded as the row is), by ?email= and in sort=name's
// order, with the company key, the admin's key and the key of the agent who owns it; another agent's key
// does not find it. Bug (issue 20, C): search_text, sort_name and email_key were computed by
// app/contacts' writes only, so a contact written another way (the portfolio import, through
// ent without them; raw SQL of an import) was found by no q. The database derives them now
// (trigger contacts_search_columns); the portfolio import's own case is
// test/portfolio TestPortfolio_ImportedContactsAreSearchable.
func TestContacts_EveryWritePathIsSearchable(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	agent, other := env.NewUser(t, a, "agent"), env.NewUser(t, a, "agent")
	agentKey, otherKey, adminKey := a.UserKey(t, agent), a.UserKey(t, other), a.UserKey(t, a.Admin)
	owner := agent.ID.String()

	type written struct{ path, id, last, email string }
	var all []written
	must := func(r *apitest.Response, status int, what string) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
	}
	idOf := func(r *apitest.Response) string {
		var v struct{ ID string }
		r.Decode(t, &v)
		return v.ID
	}

	// POST /contacts with the agent's own key: the agent owns it by default.
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: agentKey, Body: map[string]any{
		"type": "private", "firstName": "Paula", "lastName": "Pfadpost", "email": "Paula.Pfadpost@Example.com",
		"address": map[string]any{"city": "Pfadstadt"}}})
	must(r, 201, "POST /contacts")
	all = append(all, written{"POST /contacts", idOf(r), "Pfadpost", "paula.pfadpost@example.com"})

	// PATCH /contacts/{id}: the new name is found, the old one no longer.
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/contacts", Key: a.Secret, Body: map[string]any{
		"type": "private", "firstName": "Peter", "lastName": "Altname", "ownerId": owner}})
	must(r, 201, "POST /contacts for PATCH")
	patched := idOf(r)
	r = env.Do(t, apitest.Request{Method: "PATCH", Path: "/contacts/" + patched, Key: a.Secret,
		Header: map[string]string{"If-Match": r.Header.Get("ETag"), "Content-Type": "application/merge-patch+json"},
		Body:   map[string]any{"lastName": "Pfadpatch", "email": "peter.pfadpatch@example.com"}})
	must(r, 200, "PATCH /contacts/{id}")
	all = append(all, written{"PATCH /contacts/{id}", patched, "Pfadpatch", "peter.pfadpatch@example.com"})

	// POST /contacts/bulk: an item upserted by its external reference.
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/contacts/bulk", Key: a.Secret, Body: map[string]any{"items": []map[string]any{{
		"externalReference": map[string]string{"source": "ams", "externalId": "PFAD-B"}, "type": "private",
		"firstName": "Berta", "lastName": "Pfadbulk", "email": "berta.pfadbulk@example.com", "ownerId": owner}}}})
	must(r, 200, "POST /contacts/bulk")
	var bulk struct{ Data []struct{ Status, ID string } }
	r.Decode(t, &bulk)
	if len(bulk.Data) != 1 || bulk.Data[0].Status != "created" {
		t.Fatalf("bulk: %s", r.Body)
	}
	all = append(all, written{"POST /contacts/bulk", bulk.Data[0].ID, "Pfadbulk", "berta.pfadbulk@example.com"})

	// PUT /external/{source}/contacts/{externalId} with the agent's key.
	r = env.Do(t, apitest.Request{Method: "PUT", Path: "/external/ams/contacts/PFAD-E", Key: agentKey, Body: map[string]any{
		"type": "business", "business": map[string]any{"companyName": "Pfadextern GmbH"}, "email": "info@pfadextern.example"}})
	must(r, 201, "PUT /external/ams/contacts/PFAD-E")
	all = append(all, written{"PUT /external/…/contacts/…", idOf(r), "Pfadextern", "info@pfadextern.example"})

	// POST /leads/{id}/convert: the contact takes the lead's owner.
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: a.Secret, Body: map[string]any{
		"firstName": "Lena", "lastName": "Pfadlead", "email": "lena.pfadlead@example.com", "ownerId": owner}})
	must(r, 201, "POST /leads")
	r = env.Do(t, apitest.Request{Method: "POST", Path: "/leads/" + idOf(r) + "/convert", Key: a.Secret,
		Body: map[string]any{"contactType": "private"}})
	must(r, 201, "POST /leads/{id}/convert")
	var conv struct{ Contact struct{ ID string } }
	r.Decode(t, &conv)
	all = append(all, written{"POST /leads/{id}/convert", conv.Contact.ID, "Pfadlead", "lena.pfadlead@example.com"})

	// Raw SQL, as an import that bypasses ent might write (empty search columns): the row
	// still gets them.
	raw := uuid.New()
	err := env.Pinned(context.Background(), a.ID, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO contacts (id, company_id, type, first_name, last_name, email, owner_id, search_text,
			sort_name, tags, labels, custom_fields, groups, sensitive, version, created_at, updated_at)
			VALUES ($1, $2, 'private', 'Rolf', 'Pfadroh', ' Rolf.Pfadroh@Example.com', $3, '', '', '["pfadtag"]', '[]', '{}',
			        '{"address": {"street": "Pfadgasse 1"}}', '{}', 1, now(), now())`, raw, a.ID, agent.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, written{"raw INSERT", raw.String(), "Pfadroh", "rolf.pfadroh@example.com"})

	ids := func(key, query string) []string {
		t.Helper()
		r := env.Do(t, apitest.Request{Path: "/contacts?limit=100&" + query, Key: key})
		must(r, 200, "GET /contacts?"+query)
		var p apitest.Page[contact]
		r.Decode(t, &p)
		var out []string
		for _, c := range p.Data {
			out = append(out, c.ID)
		}
		return out
	}
	for _, w := range all {
		t.Run(w.path, func(t *testing.T) {
			for _, k := range []struct{ name, key string }{{"company key", a.Secret}, {"admin's key", adminKey}, {"owning agent", agentKey}} {
				for _, q := range []string{"q=" + url.QueryEscape(strings.ToUpper(w.last)), "email=" + url.QueryEscape(strings.ToUpper(w.email))} {
					if got := ids(k.key, q); !slices.Equal(got, []string{w.id}) {
						t.Errorf("%s, %s: %v, want [%s]", k.name, q, got, w.id)
					}
				}
			}
			if got := ids(otherKey, "q="+w.last); len(got) != 0 {
				t.Errorf("another agent finds %v", got)
			}
		})
	}
	t.Run("old name after PATCH", func(t *testing.T) {
		if got := ids(a.Secret, "q=altname"); len(got) != 0 {
			t.Errorf("q=altname finds %v after the rename", got)
		}
	})
	t.Run("every part of the raw row", func(t *testing.T) {
		for _, q := range []string{"rolf", "pfadgasse", "pfadtag"} {
			if got := ids(agentKey, "q="+q); !slices.Equal(got, []string{raw.String()}) {
				t.Errorf("q=%s: %v", q, got)
			}
		}
	})
	t.Run("sort=name", func(t *testing.T) {
		want := []string{} // by last name; the business by its company name
		byName := slices.Clone(all)
		slices.SortFunc(byName, func(x, y written) int { return strings.Compare(strings.ToLower(x.last), strings.ToLower(y.last)) })
		for _, w := range byName {
			want = append(want, w.id)
		}
		if got := ids(agentKey, "sort=name"); !slices.Equal(got, want) {
			t.Errorf("sort=name: %v, want %v", got, want)
		}
	})
}

// TestContacts_SearchFoldMatchesGo: contact_fold, which folds every contact's search columns in
// the database, does to every letter of Unicode (and the white space around it) what
// app/contacts does to a query term: strings.TrimSpace, then strings.ToLower. A collation that
// folded otherwise (the database's default under locale C leaves Ü alone; ICU makes İ two
// characters) would hide contacts from a q that names them exactly.
func TestContacts_SearchFoldMatchesGo(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	var in []string
	for r := rune(1); r <= unicode.MaxRune; r++ {
		if utf8.ValidRune(r) && (unicode.IsLetter(r) || unicode.IsSpace(r)) {
			in = append(in, string(r))
		}
	}
	in = append(in, " \u00a0Müller-Lüdenscheidt\u3000", "\tİSTANBUL ẞ Σ\n", "   ")
	rows, err := env.AppDB.Query(`SELECT x, contact_fold(x) FROM unnest($1::text[]) x`, in)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, bad := 0, 0
	for rows.Next() {
		var x, got string
		if err := rows.Scan(&x, &got); err != nil {
			t.Fatal(err)
		}
		n++
		if want := strings.ToLower(strings.TrimSpace(x)); got != want {
			if bad++; bad <= 10 {
				t.Errorf("contact_fold(%+q) = %+q, Go folds to %+q", x, got, want)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(in) || bad > 0 {
		t.Errorf("%d of %d strings compared, %d differ", n, len(in), bad)
	}
}
