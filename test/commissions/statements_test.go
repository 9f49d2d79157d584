package commissions

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestStatements_UploadErrors: every refused upload names its field, and nothing is queued.
func TestStatements_UploadErrors(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a := env.NewCompany(t)
	file := gdvStatement(t, "5501", inkasso(t, "5501", "X-1", "40", "15012025", 100))
	mp := func(fields map[string]string, name string, content []byte) apitest.Case {
		body, ct := multipartBody(t, fields, name, content)
		return apitest.Case{Key: a.Secret, Method: "POST", Path: "/commission-statements", Body: body,
			Header: map[string]string{"Content-Type": ct}, Status: 422}
	}
	with := func(c apitest.Case, name string, check func(*testing.T, *apitest.Response)) apitest.Case {
		c.Name, c.Check = name, check
		return c
	}
	env.Run(t, []apitest.Case{
		// Each catches a check parseStatement or CreateStatement would miss.
		with(mp(map[string]string{}, "a.gdv", file), "format missing", apitest.FieldErrors("format:required")),
		with(mp(map[string]string{"format": "gdv_vu_vermittler"}, "a.gdv", file), "unknown format",
			apitest.FieldErrors("format:invalid_enum")),
		with(mp(map[string]string{"format": "gdv_0400"}, "", nil), "file missing", apitest.FieldErrors("file:required")),
		with(mp(map[string]string{"format": "gdv_0400", "insurerId": "x"}, "a.gdv", file), "insurer id malformed",
			apitest.FieldErrors("insurerId:invalid_uuid")),
		with(mp(map[string]string{"format": "gdv_0400", "insurerId": uuid.NewString()}, "a.gdv", file), "insurer unknown",
			apitest.FieldErrors("insurerId:unknown_insurer")),
		with(mp(map[string]string{"format": "csv", "mapping": "{"}, "a.csv", file), "mapping not JSON",
			apitest.FieldErrors("mapping:invalid_mapping")),
		with(mp(map[string]string{"format": "csv", "mapping": `{"premium":"Beitrag"}`}, "a.csv", file), "mapping names no entry field",
			apitest.FieldErrors("mapping.premium:unknown_field")),
		with(mp(map[string]string{"format": "csv", "mapping": `{"policyNumber":"A","amount":"a"}`}, "a.csv", file),
			"mapping names one column twice", apitest.FieldErrors("mapping:invalid_mapping")),
		with(mp(map[string]string{"format": "gdv_0400", "mapping": `{"amount":"Betrag"}`}, "a.gdv", file), "mapping for gdv",
			apitest.FieldErrors("mapping:not_applicable")),
		with(mp(map[string]string{"format": "gdv_0400", "source": "x"}, "a.gdv", file), "unknown field",
			apitest.FieldErrors("source:unknown_field")),
		with(mp(map[string]string{"format": "gdv_0400"}, "a.gdv", []byte{}), "empty file", apitest.FieldErrors("file:empty")),
		{Name: "not multipart", Key: a.Secret, Method: "POST", Path: "/commission-statements", Body: `{"format":"csv"}`, Status: 415},
		func() apitest.Case {
			c := mp(map[string]string{"format": "gdv_0400"}, "a.gdv", file)
			c.Name, c.Key, c.Status, c.Problem = "write scope missing", a.KeyWithScopes(t, "commissions:read"), 403, "insufficient_scope"
			return c
		}(),
		func() apitest.Case {
			c := mp(map[string]string{"format": "gdv_0400"}, "a.gdv", file)
			c.Name, c.Key, c.Status = "no key", "", 401
			return c
		}(),
	})
	if n := len(apitest.Get[apitest.Page[statement]](t, env, a.Secret, "/commission-statements").Data); n != 0 {
		t.Errorf("%d statements after refused uploads, want 0", n)
	}
}

// TestStatements_ParseMatchAndPatch: a GDV statement without insurerId takes the insurer from
// its Vorsatz, matches policy numbers written differently, keeps the unknown one unmatched,
// sums in SQL with the Storno's sign; the status moves as decided; a file that is not GDV
// fails with a message and refuses status moves.
func TestStatements_ParseMatchAndPatch(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a, b := env.NewCompany(t), env.NewCompany(t)
	ins := mustInsurer(t, env, a.Secret, "5501")
	contract, _ := mustContract(t, env, a.Secret, ins.ID, "LV-100/7", "")
	file := gdvStatement(t, "5501",
		inkasso(t, "5501", "0LV 100-7", "40", "15012025", 12345),
		inkasso(t, "5501", "lv1007", "41", "20012025", -2345),
		inkasso(t, "5501", "UNBEKANNT-1", "40", "21012025", 100))
	st := mustUpload(t, env, a.Secret, map[string]string{"format": "gdv_0400"}, file)
	if st.ImportStatus != "processed" || st.EntryCount != 3 || st.MatchedCount != 2 || st.Total == nil || *st.Total != "101.00" ||
		st.InsurerID == nil || *st.InsurerID != ins.ID || st.PeriodFrom == nil || *st.PeriodFrom != "2025-01-01" || st.Status != "received" {
		t.Fatalf("statement %+v", st)
	}
	es := entries(t, env, a.Secret, "&statementId="+st.ID)
	if len(es) != 3 {
		t.Fatalf("%d entries", len(es))
	}
	for _, e := range es {
		matched := e.ContractID != nil && *e.ContractID == contract && e.MatchedBy != nil && *e.MatchedBy == "auto"
		if matched == (e.PolicyNumber == "UNBEKANNT-1") {
			t.Errorf("entry %s matched %v: %+v", e.PolicyNumber, matched, e)
		}
	}
	if apitest.EventsAbout(t, env, a.Secret, "commission_statement.processed", st.ID) != 1 ||
		apitest.EventsAbout(t, env, a.Secret, "commission_statement.created", st.ID) != 1 {
		t.Error("created and processed events: want one each")
	}

	// The broken file: not GDV at all.
	bad := mustUpload(t, env, a.Secret, map[string]string{"format": "gdv_0400"}, []byte("Vertragsnummer;Betrag\nX;1,00\n"))
	if bad.ImportStatus != "failed" || bad.Error == nil || bad.EntryCount != 0 {
		t.Fatalf("broken file: %+v", bad)
	}

	path := "/commission-statements/" + st.ID
	patch := func(name, key, p, body string, status int, problem string) apitest.Case {
		return apitest.Case{Name: name, Key: key, Method: "PATCH", Path: p, Body: body, Status: status, Problem: problem}
	}
	env.Run(t, []apitest.Case{
		{Name: "read it", Key: a.Secret, Path: path, Status: 200},
		{Name: "other company gets 404", Key: b.Secret, Path: path, Status: 404},
		{Name: "malformed id", Key: a.Secret, Path: "/commission-statements/x", Status: 400},
		{Name: "read scope missing", Key: a.KeyWithScopes(t, "contacts:read"), Path: path, Status: 403},
		{Name: "list by insurer and period", Key: a.Secret, Path: "/commission-statements?insurerId=" + ins.ID +
			"&periodFrom=2025-01-15&periodTo=2025-02-01&status=received", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[statement]
				r.Decode(t, &p)
				if len(p.Data) != 1 || p.Data[0].ID != st.ID {
					t.Errorf("listed %+v", p.Data)
				}
			}},
		{Name: "a period after the statement's lists nothing", Key: a.Secret, Path: "/commission-statements?periodFrom=2025-02-01",
			Status: 200, Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[statement]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("listed %d", len(p.Data))
				}
			}},
		{Name: "list filters malformed", Key: a.Secret, Path: "/commission-statements?insurerId=x&periodFrom=2025-13-01&status=open",
			Status: 422, Check: apitest.FieldErrorSet("insurerId:invalid_uuid", "periodFrom:invalid_date", "status:invalid_enum")},
		{Name: "period reversed", Key: a.Secret, Path: "/commission-statements?periodFrom=2025-02-01&periodTo=2025-01-01",
			Status: 422, Check: apitest.FieldErrors("periodTo:invalid_range")},
		{Name: "other company's list is empty", Key: b.Secret, Path: "/commission-statements", Status: 200,
			Check: func(t *testing.T, r *apitest.Response) {
				var p apitest.Page[statement]
				r.Decode(t, &p)
				if len(p.Data) != 0 {
					t.Errorf("b sees %d statements", len(p.Data))
				}
			}},
		patch("unknown status", a.Secret, path, `{"status":"paid"}`, 422, ""),
		patch("status cleared", a.Secret, path, `{"status":null}`, 422, ""),
		patch("note too long", a.Secret, path, `{"note":"`+strings.Repeat("x", 2001)+`"}`, 422, ""),
		patch("server-owned field", a.Secret, path, `{"total":"1.00"}`, 422, ""),
		patch("other company", b.Secret, path, `{"status":"reconciled"}`, 404, ""),
		patch("write scope missing", a.KeyWithScopes(t, "commissions:read"), path, `{"status":"reconciled"}`, 403, "insufficient_scope"),
		{Name: "stale If-Match", Key: a.Secret, Method: "PATCH", Path: path, Body: `{"status":"reconciled"}`,
			Header: map[string]string{"If-Match": `"999"`}, Status: 412},
		patch("received to reconciled", a.Secret, path, `{"status":"reconciled","note":"geprüft"}`, 200, ""),
		patch("reconciled back to received is refused", a.Secret, path, `{"status":"received"}`, 409, "status_transition"),
		patch("reconciled to disputed", a.Secret, path, `{"status":"disputed","note":null}`, 200, ""),
		patch("disputed to received", a.Secret, path, `{"status":"received"}`, 200, ""),
		patch("a failed statement's status stays", a.Secret, "/commission-statements/"+bad.ID, `{"status":"disputed"}`, 409,
			"statement_not_processed"),
		patch("a failed statement takes a note", a.Secret, "/commission-statements/"+bad.ID, `{"note":"Datei defekt"}`, 200, ""),
	})
	got := apitest.Get[statement](t, env, a.Secret, path)
	if got.Status != "received" || got.Note != nil {
		t.Errorf("after the patches: %s note %v", got.Status, got.Note)
	}
	if n := apitest.EventsAbout(t, env, a.Secret, "commission_statement.updated", st.ID); n != 3 {
		t.Errorf("%d commission_statement.updated events, want 3", n)
	}
}

// TestStatements_CSVWithInsurer: a CSV statement read with its German default headers and the
// insurer given with the upload matches by that insurer; an entry whose file names another
// VU number stays with the given insurer (the upload's insurer wins).
func TestStatements_CSVWithInsurer(t *testing.T) {
	t.Parallel()
	env := setup(t)
	a := env.NewCompany(t)
	ins := mustInsurer(t, env, a.Secret, "5501")
	mustContract(t, env, a.Secret, ins.ID, "KV-77", "")
	csv := "Vertragsnummer;Buchungsdatum;Buchungsart;Provision;Buchungstext\n" +
		"kv 77;31.01.2025;Abschlussprovision;1.234,56;AP\n" +
		"KV-77;15.02.2025;Storno;-412,50;Storno AP\n"
	st := mustUpload(t, env, a.Secret, map[string]string{"format": "csv", "insurerId": ins.ID}, []byte(csv))
	if st.ImportStatus != "processed" || st.EntryCount != 2 || st.MatchedCount != 2 || *st.Total != "822.06" {
		t.Fatalf("statement %+v", st)
	}
	mapped := "Nr;Summe;Tag\nKV-77;10,00;01.03.2025\n"
	st = mustUpload(t, env, a.Secret, map[string]string{"format": "csv", "insurerId": ins.ID,
		"mapping": `{"policyNumber":"Nr","amount":"Summe","bookedOn":"Tag"}`}, []byte(mapped))
	if st.ImportStatus != "processed" || st.EntryCount != 1 || st.MatchedCount != 1 || *st.Total != "10.00" {
		t.Fatalf("mapped statement %+v", st)
	}
}
