package commissions

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestCommissions_EndToEnd is the acceptance run of issue 24: a GDV file with 0200 contracts
// is imported through POST /portfolio-transfers; a 0400 statement for those contracts (the
// same insurer's Inkasso file: commission for each, a Storno for every third) is uploaded as
// gdv_0400 without insurerId; every entry matches, and the statement's total and the sum of
// its entries (GET /commission-entries) and the total of GET /reports/commissions equal the
// file's sum to the cent.
func TestCommissions_EndToEnd(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	var file bytes.Buffer
	if _, err := gdv.Generate(&file, gdv.GenerateOptions{Contracts: 40, Seed: 24}); err != nil {
		t.Fatal(err)
	}
	// The contracts of the file: VU number and Versicherungsschein-Nummer of each 0200 part 1
	// (ISO-8859-15: one byte a character).
	type policy struct{ vu, vsnr string }
	var policies []policy
	for _, line := range strings.Split(file.String(), "\n") {
		if len(line) >= 256 && line[:4] == "0200" && line[255] == '1' {
			policies = append(policies, policy{vu: strings.TrimSpace(line[4:9]), vsnr: strings.TrimSpace(line[13:30])})
		}
	}
	if len(policies) != 40 {
		t.Fatalf("%d contracts in the generated file", len(policies))
	}

	body, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler", "autoCommit": "true"}, "bestand.gdv", file.Bytes())
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers", Key: co.Secret, Body: body,
		Header: map[string]string{"Content-Type": ct}})
	if r.Status != 202 {
		t.Fatalf("portfolio upload: %d %s", r.Status, r.Body)
	}
	var tr struct{ ID, Status string }
	r.Decode(t, &tr)
	for deadline := time.Now().Add(60 * time.Second); tr.Status != "committed"; time.Sleep(200 * time.Millisecond) {
		tr = apitest.Get[struct{ ID, Status string }](t, env, co.Secret, "/portfolio-transfers/"+tr.ID)
		if tr.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("portfolio transfer %s", tr.Status)
		}
	}

	vu := policies[0].vu
	var recs []string
	sum := decimal.Zero
	for i, p := range policies {
		if p.vu != vu {
			t.Fatalf("the generated file has more than one insurer: %s, %s", vu, p.vu)
		}
		c := int64(1000 + 37*i) // 10.00, 10.37, …
		recs = append(recs, inkasso(t, vu, p.vsnr, "40", "15012025", c))
		sum = sum.Add(decimal.New(c, -2))
		if i%3 == 0 {
			recs = append(recs, inkasso(t, vu, p.vsnr, "41", "20012025", -c/2))
			sum = sum.Add(decimal.New(-c/2, -2))
		}
	}
	st := mustUpload(t, env, co.Secret, map[string]string{"format": "gdv_0400"}, gdvStatement(t, vu, recs...))
	if st.ImportStatus != "processed" || st.EntryCount != len(recs) || st.MatchedCount != st.EntryCount {
		t.Fatalf("statement %s: %d entries, %d matched, want %d all matched; issues %+v", st.ImportStatus, st.EntryCount,
			st.MatchedCount, len(recs), st.Issues)
	}
	if st.Total == nil || *st.Total != sum.StringFixed(2) {
		t.Fatalf("statement total %v, want the file's %s", st.Total, sum.StringFixed(2))
	}
	es := entries(t, env, co.Secret, "&statementId="+st.ID)
	got := decimal.Zero
	for _, e := range es {
		if e.ContractID == nil {
			t.Errorf("entry %s of line %d unmatched", e.PolicyNumber, e.Line)
		}
		got = got.Add(decimal.RequireFromString(e.Amount))
	}
	if len(es) != len(recs) || !got.Equal(sum) {
		t.Errorf("%d entries summing to %s, want %d summing to %s", len(es), got.StringFixed(2), len(recs), sum.StringFixed(2))
	}
	if n := len(entries(t, env, co.Secret, "&statementId="+st.ID+"&matched=false")); n != 0 {
		t.Errorf("%d unmatched entries", n)
	}
	// The commission report of the statement's month: its total is the file's sum, by insurer
	// one row holding every entry.
	type report struct {
		Data []struct {
			Amount  string `json:"amount"`
			Entries int    `json:"entries"`
		} `json:"data"`
		Total string `json:"total"`
	}
	rep := apitest.Get[report](t, env, co.Secret, "/reports/commissions?from=2025-01-01&to=2025-01-31&groupBy=insurer")
	if rep.Total != sum.StringFixed(2) || len(rep.Data) != 1 || rep.Data[0].Entries != len(recs) || rep.Data[0].Amount != rep.Total {
		t.Errorf("report %+v, want total %s in one row of %d entries", rep, sum.StringFixed(2), len(recs))
	}
}
