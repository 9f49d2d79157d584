package portfolio

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/text/encoding/charmap"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

type mapping struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Columns      map[string]string `json:"columns"`
	Defaults     map[string]string `json:"defaults"`
	DecimalPoint bool              `json:"decimalPoint"`
}

var csvColumns = map[string]string{
	"VSNR": "contract.policyNumber", "VU-Nr": "contract.insurer", "Sparte": "contract.sparte",
	"Beginn": "contract.startDate", "Beitrag": "contract.premium", "Zahlweise": "contract.paymentFrequency",
	"Vorname": "person.firstName", "Name": "person.lastName", "Geburtsdatum": "person.birthDate",
}

// TestPortfolio_Mappings: the CSV mapping resource and its error cases.
func TestPortfolio_Mappings(t *testing.T) {
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	m := apitest.Create[mapping](t, env, a.Secret, "/portfolio-mappings", map[string]any{"name": "Export", "columns": csvColumns,
		"defaults": map[string]string{"contract.status": "aktiv"}})
	if m.Columns["VSNR"] != "contract.policyNumber" || m.Defaults["contract.status"] != "aktiv" || m.DecimalPoint {
		t.Fatalf("created %+v", m)
	}
	one := "/portfolio-mappings/" + m.ID
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	env.Run(t, []apitest.Case{
		{Name: "unknown and duplicate targets, defaults too", Key: a.Secret, Method: "POST", Path: "/portfolio-mappings",
			Body: map[string]any{"name": "x", "columns": map[string]string{"VSNR": "contract.policyNumber", "Farbe": "contract.color",
				"Nr": "contract.policyNumber"}, "defaults": map[string]string{"person.shoeSize": "42"}},
			Status: 422, Check: apitest.FieldErrorSet("columns.Farbe:unknown_target", "columns.VSNR:duplicate_target", "defaults.person.shoeSize:unknown_target")},
		{Name: "policy number unmapped, name missing", Key: a.Secret, Method: "POST", Path: "/portfolio-mappings",
			Body: map[string]any{"columns": map[string]string{"Name": "person.lastName"}}, Status: 422,
			Check: apitest.FieldErrorSet("columns:required", "name:required")},
		{Name: "no columns, empty default", Key: a.Secret, Method: "POST", Path: "/portfolio-mappings",
			Body: map[string]any{"name": " ", "columns": map[string]string{}, "defaults": map[string]string{"contract.status": ""}}, Status: 422,
			Check: apitest.FieldErrorSet("columns:required", "defaults.contract.status:invalid_length", "name:invalid_length")},
		{Name: "unknown field", Key: a.Secret, Method: "POST", Path: "/portfolio-mappings",
			Body: map[string]any{"name": "x", "columns": csvColumns, "comma": ","}, Status: 422, Check: apitest.FieldErrorSet("comma:unknown_field")},
		{Name: "not JSON", Key: a.Secret, Method: "POST", Path: "/portfolio-mappings", Body: "name=x",
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, Status: 415},
		{Name: "read scope cannot create", Key: a.KeyWithScopes(t, "portfolio:read"), Method: "POST", Path: "/portfolio-mappings",
			Body: map[string]any{"name": "x", "columns": csvColumns}, Status: 403, Problem: "insufficient_scope"},
		{Name: "targets", Key: a.Secret, Path: "/portfolio-mapping-targets", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !bytes.Contains(r.Body, []byte(`"contract.policyNumber"`)) || !bytes.Contains(r.Body, []byte(`"person.birthDate"`)) {
				t.Errorf("targets %s", r.Body)
			}
		}},
		{Name: "get", Key: a.Secret, Path: one, Status: 200},
		{Name: "bad id", Key: a.Secret, Path: "/portfolio-mappings/x", Status: 400},
		{Name: "unknown id", Key: a.Secret, Path: "/portfolio-mappings/" + uuid.NewString(), Status: 404, Problem: "not_found"},
		{Name: "other company: get 404", Key: b.Secret, Path: one, Status: 404},
		{Name: "other company: patch 404", Key: b.Secret, Method: "PATCH", Path: one, Header: merge, Body: map[string]any{"name": "B"}, Status: 404},
		{Name: "other company: delete 404", Key: b.Secret, Method: "DELETE", Path: one, Status: 404},
		{Name: "other company's list is empty", Key: b.Secret, Path: "/portfolio-mappings", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if bytes.Contains(r.Body, []byte(m.ID)) {
				t.Error("B lists A's mapping")
			}
		}},
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: one, Header: map[string]string{"Content-Type": "application/merge-patch+json",
			"If-Match": `"99"`}, Body: map[string]any{"name": "y"}, Status: 412},
		{Name: "patch removing the policy number column", Key: a.Secret, Method: "PATCH", Path: one, Header: merge,
			Body: map[string]any{"columns": map[string]any{"VSNR": nil}}, Status: 422, Check: apitest.FieldErrorSet("columns:required")},
		{Name: "patch to an unknown target", Key: a.Secret, Method: "PATCH", Path: one, Header: merge,
			Body: map[string]any{"columns": map[string]any{"Farbe": "contract.color"}}, Status: 422, Check: apitest.FieldErrorSet("columns.Farbe:unknown_target")},
		{Name: "patch merges columns key by key", Key: a.Secret, Method: "PATCH", Path: one, Header: merge,
			Body: map[string]any{"columns": map[string]any{"Ort": "person.city", "Beginn": nil}, "defaults": nil, "decimalPoint": true}, Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var got mapping
				r.Decode(t, &got)
				if got.Columns["Ort"] != "person.city" || got.Columns["Beginn"] != "" || got.Columns["VSNR"] == "" || len(got.Defaults) != 0 || !got.DecimalPoint {
					t.Errorf("after patch %+v", got)
				}
			}},
		{Name: "read-only field", Key: a.Secret, Method: "PATCH", Path: one, Header: merge, Body: map[string]any{"id": uuid.NewString()},
			Status: 422, Check: apitest.FieldErrorSet("id:read_only_field")},
		{Name: "list", Key: a.Secret, Path: "/portfolio-mappings", Status: 200, Check: func(t *testing.T, r *apitest.Response) {
			if !bytes.Contains(r.Body, []byte(m.ID)) {
				t.Error("list lacks the mapping")
			}
		}},
		{Name: "delete", Key: a.Secret, Method: "DELETE", Path: one, Status: 204},
		{Name: "gone", Key: a.Secret, Path: one, Status: 404},
	})
}

func cp1252(t *testing.T, s string) []byte {
	t.Helper()
	b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPortfolio_CSV imports a semicolon CSV (Windows-1252, German amounts and dates) end to
// end: validate, commit, counts; the transfer keeps its mapping when the mapping is deleted
// meanwhile; a second import of the same file changes nothing. mappingId is checked.
func TestPortfolio_CSV(t *testing.T) {
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	m := apitest.Create[mapping](t, env, a.Secret, "/portfolio-mappings", map[string]any{"name": "Export", "columns": csvColumns})
	ofB := apitest.Create[mapping](t, env, b.Secret, "/portfolio-mappings", map[string]any{"name": "B", "columns": csvColumns})
	file := cp1252(t, "VSNR;VU-Nr;Sparte;Beginn;Beitrag;Zahlweise;Vorname;Name;Geburtsdatum;Notiz\n"+
		"HR-1;5015;130;01.04.2020;\"1.234,56\";jährlich;Jürgen;Müller;03.02.1970;\"mit; Semikolon\"\n"+
		"HR-2;5015;140;01.01.2021;12,50;monatlich;Jürgen;Müller;03.02.1970;\n"+
		"HR-3;5501;130;15.06.2019;99,00;vierteljährlich;Änne;Groß;11.11.1981;\n")
	csv := func(id string) map[string]string {
		return map[string]string{"format": "csv", "source": "mvp", "mappingId": id}
	}

	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"unknown mapping", csv(uuid.NewString()), "mappingId:unknown_mapping"},
		{"another company's mapping", csv(ofB.ID), "mappingId:unknown_mapping"},
		{"bad mapping id", csv("x"), "mappingId:invalid_uuid"},
		{"mapping with GDV", map[string]string{"format": "gdv_vu_vermittler", "mappingId": m.ID}, "mappingId:not_applicable"},
	} {
		r := upload(t, env, a.Secret, tc.fields, "bestand.csv", file)
		if r.Status != 422 {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
			continue
		}
		apitest.FieldErrors(tc.want)(t, r)
	}

	r := upload(t, env, a.Secret, csv(m.ID), "bestand.csv", file)
	if r.Status != 202 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var tr transfer
	r.Decode(t, &tr)
	tr = await(t, env, a.Secret, tr.ID, "validated", "failed")
	if s := tr.Summary; tr.Status != "validated" || s.Contracts != 3 || s.ContractsToCreate != 3 || s.PersonsToCreate != 2 {
		t.Fatalf("validated: %+v", tr)
	}
	// The mapping goes; the transfer keeps the copy it was made with.
	if r := env.Do(t, apitest.Request{Method: "DELETE", Path: "/portfolio-mappings/" + m.ID, Key: a.Secret}); r.Status != 204 {
		t.Fatalf("delete mapping: %d %s", r.Status, r.Body)
	}
	if r := env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers/" + tr.ID + "/commit", Key: a.Secret}); r.Status != 202 {
		t.Fatalf("commit: %d %s", r.Status, r.Body)
	}
	tr = await(t, env, a.Secret, tr.ID, "committed", "failed")
	if tr.Status != "committed" || tr.Progress.Created != 3 || tr.Progress.Contacts != 2 || tr.Progress.Done != 3 {
		t.Fatalf("committed: %+v", tr)
	}
	if n := count(t, env, a.Secret, "/contracts?limit=100"); n != 3 {
		t.Errorf("%d contracts, want 3", n)
	}
	g := env.Do(t, apitest.Request{Path: "/portfolio-transfers/" + tr.ID, Key: a.Secret})
	if !bytes.Contains(g.Body, []byte(`"mappingId":null`)) {
		t.Errorf("transfer after its mapping was deleted: %s", g.Body)
	}
	c := env.Do(t, apitest.Request{Path: "/contracts?limit=100", Key: a.Secret})
	for _, want := range []string{`"premium":"1234.56"`, `"paymentFrequency":"yearly"`, `"annualPremium":"150.00"`,
		`"paymentFrequency":"quarterly"`, `"startDate":"2019-06-15"`} {
		if !strings.Contains(string(c.Body), want) {
			t.Errorf("contracts lack %s: %s", want, c.Body)
		}
	}

	// The same file again, with autoCommit: nothing changes, and the summary says so.
	m2 := apitest.Create[mapping](t, env, a.Secret, "/portfolio-mappings", map[string]any{"name": "Export 2", "columns": csvColumns})
	r = upload(t, env, a.Secret, map[string]string{"format": "csv", "source": "mvp", "mappingId": m2.ID, "autoCommit": "true"}, "bestand.csv", file)
	r.Decode(t, &tr)
	tr = await(t, env, a.Secret, tr.ID, "committed", "failed")
	if tr.Status != "committed" || tr.Summary.ContractsUnchanged != 3 || tr.Progress.Unchanged != 3 || tr.Progress.Contacts != 0 {
		t.Errorf("re-import: %+v", tr)
	}
	if n := count(t, env, a.Secret, "/contracts?limit=100"); n != 3 {
		t.Errorf("%d contracts after the re-import, want 3", n)
	}
}

// TestPortfolio_MappingDeletedDuringCreate: the mapping is read in the request's transaction and
// the transfer inserted in its own, so a DELETE may come in between (here a trigger deletes the
// mapping right before the insert): 422 unknown_mapping as for any unknown id, not a 500, and
// the stored file goes with the refused transfer.
func TestPortfolio_MappingDeletedDuringCreate(t *testing.T) {
	env := setup(t)
	a := env.NewCompany(t)
	m := apitest.Create[mapping](t, env, a.Secret, "/portfolio-mappings", map[string]any{"name": "Gleich weg", "columns": csvColumns})
	for _, q := range []string{
		`CREATE OR REPLACE FUNCTION test_delete_mapping() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN DELETE FROM portfolio_mappings WHERE id = NEW.mapping_id; RETURN NEW; END $$`,
		`CREATE TRIGGER test_delete_mapping BEFORE INSERT ON portfolio_transfers FOR EACH ROW
		WHEN (NEW.filename = 'race.csv') EXECUTE FUNCTION test_delete_mapping()`,
	} {
		if _, err := env.OwnerDB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = env.OwnerDB.Exec(`DROP TRIGGER IF EXISTS test_delete_mapping ON portfolio_transfers`) })
	r := upload(t, env, a.Secret, map[string]string{"format": "csv", "mappingId": m.ID}, "race.csv",
		[]byte("VSNR;VU-Nr\nR-1;5015\n"))
	if r.Status != 422 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	apitest.FieldErrors("mappingId:unknown_mapping")(t, r)
	if n := blobs(t, env, a); n != 0 {
		t.Errorf("%d blobs left by the refused transfer", n)
	}
}
