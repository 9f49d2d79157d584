package imports

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestImports_CSVEachEncodingAndDelimiter imports the same German contact file as UTF-8, UTF-8
// with BOM, Windows-1252 and ISO-8859-15, each with another delimiter, with the suggested
// mapping, and commits it. Bugs caught: an encoding misdetected (names as "M\ufffdller" or
// "MÃ¼ller"), the BOM kept in the first header (Vorname unmapped, every row invalid), a
// delimiter misdetected, German dates not converted, tags or contact.created missing.
func TestImports_CSVEachEncodingAndDelimiter(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	text := func(d, suffix string) string {
		return strings.Join([]string{
			strings.Join([]string{"Anrede", "Vorname", "Nachname", "E-Mail", "Straße", "PLZ", "Ort", "Geburtsdatum", "Handy"}, d),
			strings.Join([]string{"herr", "Jürgen", "Müller", "j.mueller" + suffix + "@example.test", "Hauptstraße 1", "50667", "Köln", "31.12.1980", "0171 1234567"}, d),
			strings.Join([]string{"Frau", "Anna", "Groß-Weiß", "", "", "", "", "1975-02-03", ""}, d),
		}, "\r\n") + "\r\n"
	}
	enc := func(cm *charmap.Charmap) func(string) []byte {
		return func(s string) []byte {
			b, err := cm.NewEncoder().Bytes([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	for _, tc := range []struct {
		name, delim, wantEnc string
		bytes                func(string) []byte
	}{
		{"utf-8", ";", "utf-8", func(s string) []byte { return []byte(s) }},
		{"utf-8 bom", ",", "utf-8", func(s string) []byte { return append([]byte{0xEF, 0xBB, 0xBF}, s...) }},
		{"windows-1252", "\t", "windows-1252", enc(charmap.Windows1252)},
		{"iso-8859-15", "|", "windows-1252", enc(charmap.ISO8859_15)}, // no € or Š: the same bytes as Windows-1252
	} {
		t.Run(tc.name, func(t *testing.T) {
			im := mustAnalyze(t, env, co.Secret, map[string]string{"tags": "Import 2026, Altbestand"},
				tc.bytes(text(tc.delim, strings.ReplaceAll(tc.name, " ", ""))))
			if im.Status != "analyzed" || *im.Encoding != tc.wantEnc || *im.Delimiter != tc.delim || im.Format != "csv" {
				t.Fatalf("analysis: %+v (error %v)", im, im.Error)
			}
			if im.SuggestedMapping["Vorname"] != "firstName" || im.SuggestedMapping["PLZ"] != "address.zipCode" ||
				im.SuggestedMapping["Handy"] != "mobile" || im.SuggestedMapping["Geburtsdatum"] != "personal.dateOfBirth" {
				t.Errorf("suggested mapping %v", im.SuggestedMapping)
			}
			if im.RowCount != 2 || im.RowCounts["valid"] != 2 {
				t.Fatalf("rows %d %v: %+v", im.RowCount, im.RowCounts, rows(t, env, co.Secret, im.ID, ""))
			}
			done := mustCommit(t, env, co.Secret, im.ID, nil)
			if done.OutcomeCounts["created"] != 2 || done.Committed != 2 || *done.Duplicates != "skip" {
				t.Fatalf("commit: %+v", done)
			}
			rs := rows(t, env, co.Secret, im.ID, "&outcome=created")
			if len(rs) != 2 || rs[0].Row != 2 || rs[0].ContactID == nil {
				t.Fatalf("rows %+v", rs)
			}
			c := getContact(t, env, co.Secret, *rs[0].ContactID)
			if *c.FirstName != "Jürgen" || *c.LastName != "Müller" || c.Address["city"] != "Köln" ||
				c.Personal["dateOfBirth"] != "1980-12-31" || c.Personal["salutation"] != "Herr" ||
				!slices.Equal(c.Tags, []string{"Import 2026", "Altbestand"}) || len(c.Phones) != 1 || c.Phones[0].Type != "mobile" {
				t.Errorf("contact %+v", c)
			}
			if n := apitest.EventsAbout(t, env, co.Secret, "contact.created", c.ID); n != 1 {
				t.Errorf("contact.created events: %d", n)
			}
		})
	}
}

// TestImports_XLSX imports a workbook built with excelize: a formula cell is read as its
// cached value and never evaluated, a text starting with "=" or "+" stays literal text, an
// English header row is mapped. Bugs caught: formulas evaluated or their text imported, a
// leading "=" stripped, the workbook taken for a CSV.
func TestImports_XLSX(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	f := excelize.NewFile()
	_ = f.SetSheetRow("Sheet1", "A1", &[]any{"First name", "Last name", "Email", "City", "Street"})
	_ = f.SetSheetRow("Sheet1", "A2", &[]any{"Ada", "Lovelace", "ada@example.test"})
	_ = f.SetCellFormula("Sheet1", "D2", "CONCAT(\"Ber\",\"lin\")") // no cached value: reads empty
	_ = f.SetCellStr("Sheet1", "E2", "=HYPERLINK(\"http://x\")")
	_ = f.SetSheetRow("Sheet1", "A3", &[]any{"Grace", "+Hopper", "grace@example.test", "Bonn"})
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	im := mustAnalyze(t, env, co.Secret, nil, buf.Bytes())
	if im.Status != "analyzed" || im.Format != "xlsx" || im.Encoding != nil || im.RowCounts["valid"] != 2 {
		t.Fatalf("analysis %+v, rows %+v", im, rows(t, env, co.Secret, im.ID, ""))
	}
	if im.Mapping["Street"] != "address.street" || im.Mapping["City"] != "address.city" {
		t.Errorf("mapping %v", im.Mapping)
	}
	mustCommit(t, env, co.Secret, im.ID, map[string]any{"duplicates": "skip"})
	rs := rows(t, env, co.Secret, im.ID, "")
	ada, grace := getContact(t, env, co.Secret, *rs[0].ContactID), getContact(t, env, co.Secret, *rs[1].ContactID)
	if ada.Address["street"] != `=HYPERLINK("http://x")` || ada.Address["city"] != nil {
		t.Errorf("formula cells: %v", ada.Address)
	}
	if *grace.LastName != "+Hopper" {
		t.Errorf("leading + : %q", *grace.LastName)
	}
}

// TestImports_GivenMapping: a given mapping replaces the suggestion; columns it leaves out are
// not imported. Bug caught: the suggestion used although a mapping was given.
func TestImports_GivenMapping(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	csv := "Kunde Vor;Kunde Nach;Ort;Notiz\nEva;Lind;Hamburg;vertraulich\n"
	im := mustAnalyze(t, env, co.Secret, map[string]string{"mapping": mapping(map[string]string{"Kunde Vor": "firstName",
		"Kunde Nach": "lastName"})}, []byte(csv))
	if im.RowCounts["valid"] != 1 || len(im.Mapping) != 2 || im.SuggestedMapping["Ort"] != "address.city" {
		t.Fatalf("%+v", im)
	}
	mustCommit(t, env, co.Secret, im.ID, nil)
	c := getContact(t, env, co.Secret, *rows(t, env, co.Secret, im.ID, "")[0].ContactID)
	if *c.FirstName != "Eva" || c.Address != nil && c.Address["city"] != nil {
		t.Errorf("contact %+v", c)
	}
}

// TestImports_InvalidAndRaggedRows: rows that POST /contacts would refuse, rows with too few
// or too many cells, and an empty row. Each invalid row lists its errors naming the column;
// the commit skips them. Bugs caught: a ragged row crashing the analysis or shifted into the
// wrong columns, errors without the column, invalid rows written.
func TestImports_InvalidAndRaggedRows(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	csv := strings.Join([]string{
		"Vorname;Nachname;E-Mail;PLZ;IBAN",
		"Ok;Person;ok@example.test;10115;DE89370400440532013000",
		"Kein;Mail;nicht-mail;1011;DE00",
		"NurVorname;;;;",
		"Zu;Wenig",
		"Zu;Viel;x@example.test;10115;;überzählig",
		";;;;",
		`"Quote;Voll";"Semi;kolon";q@example.test;10115;`,
	}, "\n") + "\n"
	im := mustAnalyze(t, env, co.Secret, nil, []byte(csv))
	if im.RowCount != 6 || im.RowCounts["valid"] != 2 || im.RowCounts["invalid"] != 4 {
		t.Fatalf("counts %d %v: %+v", im.RowCount, im.RowCounts, rows(t, env, co.Secret, im.ID, ""))
	}
	bad := rows(t, env, co.Secret, im.ID, "&analysis=invalid")
	byRow := map[int][]string{}
	for _, r := range bad {
		byRow[r.Row] = r.Errors
	}
	joined := func(row int) string { return strings.Join(byRow[row], " | ") }
	if s := joined(3); !strings.Contains(s, "E-Mail (email)") || !strings.Contains(s, "PLZ (address.zipCode)") ||
		!strings.Contains(s, "IBAN (bank.iban)") {
		t.Errorf("row 3: %s", s)
	}
	if s := joined(4); !strings.Contains(s, "Nachname (lastName)") {
		t.Errorf("row 4: %s", s)
	}
	if s := joined(5); !strings.Contains(s, "2 cells, the header 5") {
		t.Errorf("row 5: %s", s)
	}
	if s := joined(6); !strings.Contains(s, "6 cells") {
		t.Errorf("row 6: %s", s)
	}
	done := mustCommit(t, env, co.Secret, im.ID, nil)
	if done.OutcomeCounts["skipped"] != 4 || done.OutcomeCounts["created"] != 2 {
		t.Errorf("outcomes %v", done.OutcomeCounts)
	}
	for _, r := range rows(t, env, co.Secret, im.ID, "&outcome=skipped") {
		if r.ContactID != nil || len(r.Errors) == 0 {
			t.Errorf("skipped row %+v", r)
		}
	}
	q := rows(t, env, co.Secret, im.ID, "&outcome=created")
	if c := getContact(t, env, co.Secret, *q[1].ContactID); *c.FirstName != "Quote;Voll" {
		t.Errorf("quoted field: %q", *c.FirstName)
	}
}

// TestImports_FailedAnalysis: a row over 1 MiB fails the analysis with a message, never a
// crash or a retry loop; the failed import cannot be committed (409). Bug caught: an import
// left analyzing for ever.
func TestImports_FailedAnalysis(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	csv := "Vorname;Nachname\nA;" + strings.Repeat("x", 1100<<10) + "\n"
	im := mustAnalyze(t, env, co.Secret, nil, []byte(csv))
	if im.Status != "failed" || im.Error == nil || !strings.Contains(*im.Error, "1 MiB") {
		t.Fatalf("%+v", im)
	}
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/imports/" + im.ID + "/commit", Key: co.Secret})
	if r.Status != 409 || r.Problem(t).Code != "import_not_analyzed" {
		t.Errorf("commit of a failed import: %d %s", r.Status, r.Body)
	}
}
