package intake

import (
	"bytes"
	"database/sql"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// status posts fs as JSON to the v1 intake and returns the outcome (created or updated).
func status(t *testing.T, env *apitest.Env, key string, fs fields) string {
	t.Helper()
	r := send(t, env, post{path: v1Path, kind: asJSON, fields: fs, key: key})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var b struct{ Status string }
	r.Decode(t, &b)
	return b.Status
}

// leadByID returns the company's lead id.
func leadByID(t *testing.T, env *apitest.Env, company, id uuid.UUID) leadRow {
	t.Helper()
	for _, l := range leadsOf(t, env, company) {
		if l.ID == id {
			return l
		}
	}
	t.Fatalf("no lead %s", id)
	return leadRow{}
}

// TestIntake_DuplicatesNeverMergeTwoPeople: a shared phone number merges only submissions of
// one person. Two people of one household (one landline) stay two leads, also with one last
// name; the same person with and without e-mail, or with a new phone, stays one lead.
func TestIntake_DuplicatesNeverMergeTwoPeople(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co)
	const landline = "+49 30 1234567"
	steps := []struct {
		name   string
		fields fields
		want   string // outcome
		lead   string // the lead it lands on (a name given below)
	}{
		{"Anna Berger submits", f("firstName", "Anna", "lastName", "Berger", "email", "anna.berger@example.com",
			"phone", landline, "notes", "anna 1"), "created", "anna"},
		{"her husband, same landline, other name and e-mail: a new lead", f("firstName", "Paul", "lastName", "Schmidt",
			"email", "paul.schmidt@example.com", "phone", "030 1234567", "notes", "paul 1"), "created", "paul"},
		{"her daughter, same landline and last name, own e-mail: a new lead", f("firstName", "Petra", "lastName", "Berger",
			"email", "petra@example.com", "phone", "030/1234567", "notes", "petra 1"), "created", "petra"},
		{"the daughter again without e-mail: her lead, not her mother's", f("firstName", "Petra", "lastName", "BERGER",
			"phone", landline, "notes", "petra 2"), "updated", "petra"},
		{"Anna without e-mail: her lead", f("firstName", " anna ", "lastName", "berger", "phone", "0 30 / 123 45 67",
			"notes", "anna 2"), "updated", "anna"},
		{"Anna by e-mail with a changed phone: her lead", f("firstName", "Anna", "lastName", "Berger",
			"email", "Anna.Berger@Example.com", "phone", "0170 9999999", "notes", "anna 3"), "updated", "anna"},
		{"Paul Schmidt-Berger, same landline: another last name, another person", f("firstName", "Paul",
			"lastName", "Schmidt-Berger", "phone", landline, "notes", "other"), "created", "other"},
		{"a double name written with a space and without umlauts", f("firstName", "Jürgen", "lastName", "Müller-Lüdenscheidt",
			"phone", "0171 5550001", "notes", "j 1"), "created", "juergen"},
		{"the same person, spelled out", f("firstName", "Juergen", "lastName", "mueller luedenscheidt",
			"phone", "+49 171 5550001", "notes", "j 2"), "updated", "juergen"},
	}
	ids := map[string]uuid.UUID{}
	for _, s := range steps {
		before := map[uuid.UUID]bool{}
		for _, l := range leadsOf(t, env, co.ID) {
			before[l.ID] = true
		}
		if got := status(t, env, key, s.fields); got != s.want {
			t.Fatalf("%s: %s, want %s", s.name, got, s.want)
		}
		// The lead the step touched: the new one, or the one whose notes end with its note.
		var touched uuid.UUID
		note := ""
		for _, x := range s.fields {
			if x.k == "notes" {
				note = x.v
			}
		}
		for _, l := range leadsOf(t, env, co.ID) {
			if (s.want == "created" && !before[l.ID]) || (s.want == "updated" && bytes.HasSuffix([]byte(l.Notes), []byte(note))) {
				touched = l.ID
			}
		}
		if id, ok := ids[s.lead]; ok && id != touched {
			t.Fatalf("%s: landed on %s, want %s's lead %s", s.name, touched, s.lead, id)
		}
		ids[s.lead] = touched
	}
	if n := len(leadsOf(t, env, co.ID)); n != 5 {
		t.Errorf("%d leads, want 5 (Anna, Paul, Petra, the other, Jürgen)", n)
	}
	anna := leadByID(t, env, co.ID, ids["anna"])
	if anna.FirstName != "Anna" || anna.LastName != "Berger" || *anna.Email != "anna.berger@example.com" ||
		*anna.PhoneKey != "+49301234567" || anna.Submissions != 3 {
		t.Errorf("Anna's lead %+v", anna)
	}
	paul := leadByID(t, env, co.ID, ids["paul"])
	if paul.FirstName != "Paul" || *paul.Email != "paul.schmidt@example.com" || paul.Submissions != 1 || paul.Notes != "paul 1" {
		t.Errorf("Paul's lead %+v", paul)
	}
	if petra := leadByID(t, env, co.ID, ids["petra"]); petra.Submissions != 2 || *petra.Email != "petra@example.com" {
		t.Errorf("Petra's lead %+v", petra)
	}
}

// TestIntake_MergesOnlyIntakeLeads: holding the public key lets nobody append notes, files or
// additional fields to a lead a broker made with the API (POST /leads or the external upsert).
func TestIntake_MergesOnlyIntakeLeads(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	email := uniqueEmail("broker")
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/leads", Key: co.Secret, Body: map[string]any{
		"firstName": "Anna", "lastName": "Berger", "email": email, "phone": "0170 1234567", "notes": "called, wants BU",
		"additionalFields": map[string]string{"tarif": "Premium"}}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var apiLead struct{ ID uuid.UUID }
	r.Decode(t, &apiLead)
	ext := uniqueEmail("external")
	if r := env.Do(t, apitest.Request{Method: "PUT", Path: "/external/crm/leads/" + uuid.NewString(), Key: co.Secret,
		Body: map[string]any{"firstName": "Carl", "lastName": "Crm", "email": ext}}); r.Status != 201 {
		t.Fatalf("upsert: %d %s", r.Status, r.Body)
	}

	for _, fs := range []fields{
		f("firstName", "Anna", "lastName", "Berger", "email", email, "notes", "Ich bin es nicht", "additionalFields.tarif", "Basis"),
		f("firstName", "Anna", "lastName", "Berger", "phone", "0170 1234567", "notes", "by phone"),
		f("firstName", "Carl", "lastName", "Crm", "email", ext, "notes", "into the upserted lead"),
	} {
		r := send(t, env, post{path: v1Path, kind: asMultipart, fields: fs, key: key,
			files: []upload{{"file", "x.txt", "text/plain", []byte("x")}}})
		if r.Status != 201 || string(r.Body) != `{"status":"created"}` {
			t.Errorf("%v: %d %s, want a new lead", fs, r.Status, r.Body)
		}
	}
	got := env.Do(t, apitest.Request{Path: "/leads/" + apiLead.ID.String(), Key: co.Secret})
	var l struct {
		Notes            string
		AdditionalFields map[string]string
		Attachments      []any
	}
	got.Decode(t, &l)
	if got.Header.Get("ETag") != `"1"` || l.Notes != "called, wants BU" || l.AdditionalFields["tarif"] != "Premium" || len(l.Attachments) != 0 {
		t.Errorf("the API lead changed: %s %s", got.Header.Get("ETag"), got.Body)
	}
	if n := len(leadsOf(t, env, co.ID)); n != 5 {
		t.Errorf("%d leads, want 5 (two API leads, three intake leads)", n)
	}
	// The intake's own leads still merge: the same three again update them.
	if got := status(t, env, key, f("firstName", "Anna", "lastName", "Berger", "email", email)); got != "updated" {
		t.Errorf("into the intake lead: %s", got)
	}
	// The API lead is stored as one.
	var origin string
	pinned(t, env, co.ID, func(tx *sql.Tx) {
		if err := tx.QueryRow("SELECT origin FROM leads WHERE id = $1", apiLead.ID).Scan(&origin); err != nil {
			t.Fatal(err)
		}
	})
	if origin != "api" {
		t.Errorf("origin of the API lead %q", origin)
	}
}

// TestIntake_StripsControlAndFormatCharacters: names, notes, additional fields and file names
// arrive without control characters and Unicode format characters (zero-width, bidi overrides
// such as U+202E), in every content type; notes keep their line breaks.
func TestIntake_StripsControlAndFormatCharacters(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	co := env.NewCompany(t)
	key := pk(t, co, "example.com")
	for _, kind := range kinds {
		email := uniqueEmail("bidi")
		fs := f("firstName", "\u202eAnna\u202c", "lastName", "Ber\u200bger\u0007", "email", email,
			"notes", "Zeile 1\r\nZeile 2\u202e\x1b[2J\u0085", "additionalFields.wunsch\u200d", "Rückruf\u2066 bitte\u2069\r\nmorgens")
		r := send(t, env, post{path: v1Path, kind: kind, fields: fs, key: key,
			files: []upload{{"file", "rechnung\u202efdp.exe", "application/pdf", []byte("MZ\x90\x00")}}})
		if r.Status != 201 {
			t.Fatalf("%s: %d %s", kind, r.Status, r.Body)
		}
		l := leadByEmail(t, env, co.ID, email)
		if l.FirstName != "Anna" || l.LastName != "Berger" || l.Notes != "Zeile 1\nZeile 2[2J" ||
			l.AdditionalFields["wunsch"] != "Rückruf bitte\nmorgens" || len(l.AdditionalFields) != 1 {
			t.Errorf("%s: stored %q %q %q %q", kind, l.FirstName, l.LastName, l.Notes, l.AdditionalFields)
		}
		if kind == asMultipart {
			atts := attachmentsOf(t, env, co.ID, l.ID)
			if len(atts) != 1 || atts[0].Filename != "rechnungfdp.exe" || atts[0].ContentType != "application/octet-stream" {
				t.Errorf("attachment %+v (name without U+202E, type sniffed, not the claimed PDF)", atts)
			}
		}
	}
	// A name of nothing but format characters is no name.
	r := send(t, env, post{path: v1Path, kind: asJSON, key: key,
		fields: f("firstName", "\u202e\u200b", "lastName", "B", "email", uniqueEmail("empty"))})
	if p := r.Problem(t); r.Status != 422 || len(p.Errors) != 1 || p.Errors[0].Field != "firstName" || p.Errors[0].Code != "required" {
		t.Errorf("only format characters: %d %s", r.Status, r.Body)
	}
}
