package imports

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/imports"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestImports_DuplicatesAndPolicies: a row whose e-mail an existing contact has (in other
// case and spacing) and a row repeating an earlier row's e-mail are duplicates; skip leaves
// them, update fills the existing contact (row values win, an empty cell clears nothing, tags
// join), create makes new contacts. Bugs caught: e-mail compared without normalising, a
// duplicate within the file written twice under skip, update clearing fields or replacing
// tags, create refusing duplicates.
func TestImports_DuplicatesAndPolicies(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	old := apitest.Create[contact](t, env, co.Secret, "/contacts", map[string]any{"type": "private", "firstName": "Erika",
		"lastName": "Muster", "email": "erika@example.test", "tags": []string{"alt"}, "address": map[string]any{"city": "Bonn"}})
	for _, policy := range []string{"skip", "update", "create"} {
		t.Run(policy, func(t *testing.T) {
			csv := "Vorname;Nachname;E-Mail;PLZ\n" +
				"Erika;Musterfrau; ERIKA@Example.test ;53111\n" + // row 2: the existing contact
				"Neu;Person;neu-" + policy + "@example.test;\n" + // row 3: new
				"Neu;Zwilling;NEU-" + policy + "@example.test;\n" // row 4: duplicates row 3
			key := co.Secret
			im := mustAnalyze(t, env, key, map[string]string{"tags": "import-" + policy}, []byte(csv))
			if im.RowCounts["duplicate"] != 2 || im.RowCounts["valid"] != 1 {
				t.Fatalf("analysis %v", im.RowCounts)
			}
			rs := rows(t, env, key, im.ID, "")
			if rs[0].ContactID == nil || *rs[0].ContactID != old.ID || rs[2].DuplicateRow == nil || *rs[2].DuplicateRow != 3 {
				t.Fatalf("rows %+v", rs)
			}
			done := mustCommit(t, env, key, im.ID, map[string]any{"duplicates": policy})
			rs = rows(t, env, key, im.ID, "")
			switch policy {
			case "skip":
				if done.OutcomeCounts["duplicate"] != 2 || done.OutcomeCounts["created"] != 1 ||
					*rs[0].ContactID != old.ID || *rs[2].ContactID != *rs[1].ContactID {
					t.Errorf("%v %+v", done.OutcomeCounts, rs)
				}
			case "update":
				if done.OutcomeCounts["updated"] != 2 || done.OutcomeCounts["created"] != 1 {
					t.Errorf("%v", done.OutcomeCounts)
				}
				c := getContact(t, env, key, old.ID)
				if *c.LastName != "Musterfrau" || c.Address["city"] != "Bonn" || c.Address["zipCode"] != "53111" ||
					!strings.Contains(strings.Join(c.Tags, ","), "alt") || !strings.Contains(strings.Join(c.Tags, ","), "import-update") {
					t.Errorf("updated %+v", c)
				}
				if twin := getContact(t, env, key, *rs[2].ContactID); *twin.LastName != "Zwilling" || *rs[2].ContactID != *rs[1].ContactID {
					t.Errorf("row 4 did not update row 3's contact: %+v", twin)
				}
			case "create":
				if done.OutcomeCounts["created"] != 3 || *rs[0].ContactID == old.ID || *rs[2].ContactID == *rs[1].ContactID {
					t.Errorf("%v %+v", done.OutcomeCounts, rs)
				}
			}
		})
	}
}

// TestImports_BusinessByCompanyName: business rows match by company name normalised as the
// contacts' matching does ("Müller GmbH" is "Mueller Gesellschaft mit beschränkter Haftung").
// Bug caught: company names compared as typed.
func TestImports_BusinessByCompanyName(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	old := apitest.Create[contact](t, env, co.Secret, "/contacts", map[string]any{"type": "business",
		"business": map[string]any{"companyName": "Mueller Gesellschaft mit beschränkter Haftung"}})
	csv := "Firma;E-Mail;Ort\nMüller GmbH;info@mueller.test;Köln\nNeue AG;;Berlin\nneue ag;;Bonn\n"
	im := mustAnalyze(t, env, co.Secret, map[string]string{"contactType": "business"}, []byte(csv))
	if im.ContactType != "business" || im.Mapping["Firma"] != "business.companyName" || im.RowCounts["duplicate"] != 2 {
		t.Fatalf("%+v %+v", im, rows(t, env, co.Secret, im.ID, ""))
	}
	rs := rows(t, env, co.Secret, im.ID, "")
	if *rs[0].ContactID != old.ID || *rs[2].DuplicateRow != 3 {
		t.Errorf("%+v", rs)
	}
}

// TestImports_ResumableCommit stops the commit after its first batch (as a process killed
// there would: the hook's error ends the run with the batch committed), checks that exactly
// that batch is written, then runs the commit again: it continues after the batch, and every
// row became exactly one contact. Bug caught: a resumed commit starting over (the first
// batch's contacts twice) or skipping rows.
func TestImports_ResumableCommit(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	var b strings.Builder
	b.WriteString("Vorname;Nachname;E-Mail\n")
	for i := range 10 {
		fmt.Fprintf(&b, "Person;Nr%02d;p%02d@resume.test\n", i, i)
	}
	im := mustAnalyze(t, env, co.Secret, nil, []byte(b.String()))
	id := uuid.MustParse(im.ID)
	// Running, as POST …/commit leaves it, but without a job on the queue: this test runs the
	// steps itself.
	if err := env.Pinned(context.Background(), co.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(context.Background(), `UPDATE contact_imports SET status = 'running', duplicates = 'skip' WHERE id = $1`, id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	crash := errors.New("killed after the first batch")
	first := module(t, env, 3, func(uuid.UUID, int) error { return crash })
	args := imports.Args{CompanyID: co.ID, ImportID: id, Commit: true}
	if err := first.Run(context.Background(), args); !errors.Is(err, crash) {
		t.Fatalf("first run: %v", err)
	}
	mid := apitest.Get[importJob](t, env, co.Secret, "/imports/"+im.ID)
	if mid.Status != "running" || mid.Committed != 3 || mid.OutcomeCounts["created"] != 3 || len(contactsOf(t, env, co.Secret)) != 3 {
		t.Fatalf("after the first batch: %+v", mid)
	}
	batches := 0
	second := module(t, env, 3, func(uuid.UUID, int) error { batches++; return nil })
	if err := second.Run(context.Background(), args); err != nil {
		t.Fatalf("second run: %v", err)
	}
	done := apitest.Get[importJob](t, env, co.Secret, "/imports/"+im.ID)
	all := contactsOf(t, env, co.Secret)
	if done.Status != "completed" || done.Committed != 10 || done.OutcomeCounts["created"] != 10 || len(all) != 10 || batches != 3 { // 7 rows left: 3, 3, 1
		t.Fatalf("after the second run: %+v, %d contacts, %d batches", done, len(all), batches)
	}
	seen := map[string]bool{}
	for _, r := range rows(t, env, co.Secret, im.ID, "") {
		if r.ContactID == nil || seen[*r.ContactID] || *r.Outcome != "created" {
			t.Errorf("row %+v", r)
			continue
		}
		seen[*r.ContactID] = true
		if n := apitest.EventsAbout(t, env, co.Secret, "contact.created", *r.ContactID); n != 1 {
			t.Errorf("row %d: %d contact.created", r.Row, n)
		}
	}
}

// contactsOf lists the company's contacts (e-mail ending in @resume.test).
func contactsOf(t testing.TB, env *apitest.Env, key string) []contact {
	t.Helper()
	p := apitest.Get[apitest.Page[contact]](t, env, key, "/contacts?limit=100")
	var out []contact
	for _, c := range p.Data {
		if c.Email != nil && strings.HasSuffix(*c.Email, "@resume.test") {
			out = append(out, c)
		}
	}
	return out
}
