package commissions

import (
	"bytes"
	"slices"
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
	file := generated(t)
	importPortfolio(t, env, co.Secret, file)
	ps := policiesOf(t, file)
	recs, sum := inkassoFor(t, ps)
	checkStatement(t, env, co.Secret, gdvStatement(t, ps[0].vu, recs...), len(recs), sum)
}

// TestCommissions_EndToEndOneFile is the acceptance read as one file: the insurer's GDV file
// holds the contracts (0200 …) and the Inkasso records (0400) for them, as a VU sends its
// Bestand and Inkasso in one delivery; the same file is uploaded as a portfolio transfer (which
// keeps the 0400 records as details of their contracts) and as a gdv_0400 statement (which reads
// the 0400 records only). Catches: a reader that refuses or miscounts the records of the other.
func TestCommissions_EndToEndOneFile(t *testing.T) {
	t.Parallel()
	env := setup(t)
	co := env.NewCompany(t)
	file := generated(t)
	recs, sum := inkassoFor(t, policiesOf(t, file))
	// The Inkasso records before the Nachsatz.
	lines := strings.Split(strings.TrimRight(string(file), "\r\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	if !strings.HasPrefix(lines[len(lines)-1], "9999") {
		t.Fatalf("the generated file ends in %.4q, not a Nachsatz", lines[len(lines)-1])
	}
	one := append(append(slices.Clone(lines[:len(lines)-1]), recs...), lines[len(lines)-1])
	both := []byte(strings.Join(one, "\r\n") + "\r\n")
	importPortfolio(t, env, co.Secret, both)
	checkStatement(t, env, co.Secret, both, len(recs), sum)
}

// generated is a GDV file of 40 contracts of one insurer (gdv.Generate).
func generated(t *testing.T) []byte {
	t.Helper()
	var file bytes.Buffer
	if _, err := gdv.Generate(&file, gdv.GenerateOptions{Contracts: 40, Seed: 24}); err != nil {
		t.Fatal(err)
	}
	return file.Bytes()
}

// policy is a contract of a GDV file: VU number and Versicherungsschein-Nummer.
type policy struct{ vu, vsnr string }

// policiesOf reads the contracts of file from each 0200 part 1 (ISO-8859-15: one byte a
// character).
func policiesOf(t *testing.T, file []byte) []policy {
	t.Helper()
	var policies []policy
	for _, line := range strings.Split(string(file), "\n") {
		if len(line) >= 256 && line[:4] == "0200" && line[255] == '1' {
			policies = append(policies, policy{vu: strings.TrimSpace(line[4:9]), vsnr: strings.TrimSpace(line[13:30])})
		}
	}
	if len(policies) != 40 {
		t.Fatalf("%d contracts in the generated file", len(policies))
	}
	return policies
}

// importPortfolio imports file through POST /portfolio-transfers with autoCommit and waits
// until it is committed.
func importPortfolio(t *testing.T, env *apitest.Env, key string, file []byte) {
	t.Helper()
	body, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler", "autoCommit": "true"}, "bestand.gdv", file)
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers", Key: key, Body: body,
		Header: map[string]string{"Content-Type": ct}})
	if r.Status != 202 {
		t.Fatalf("portfolio upload: %d %s", r.Status, r.Body)
	}
	var tr struct{ ID, Status string }
	r.Decode(t, &tr)
	for deadline := time.Now().Add(60 * time.Second); tr.Status != "committed"; time.Sleep(200 * time.Millisecond) {
		tr = apitest.Get[struct{ ID, Status string }](t, env, key, "/portfolio-transfers/"+tr.ID)
		if tr.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("portfolio transfer %s", tr.Status)
		}
	}
}

// inkassoFor is a 0400 record of commission for each policy (10.00, 10.37, …) and a Storno of
// half of it for every third, with their sum.
func inkassoFor(t *testing.T, policies []policy) ([]string, decimal.Decimal) {
	t.Helper()
	vu := policies[0].vu
	var recs []string
	sum := decimal.Zero
	for i, p := range policies {
		if p.vu != vu {
			t.Fatalf("the generated file has more than one insurer: %s, %s", vu, p.vu)
		}
		c := int64(1000 + 37*i)
		recs = append(recs, inkasso(t, vu, p.vsnr, "40", "15012025", c))
		sum = sum.Add(decimal.New(c, -2))
		if i%3 == 0 {
			recs = append(recs, inkasso(t, vu, p.vsnr, "41", "20012025", -c/2))
			sum = sum.Add(decimal.New(-c/2, -2))
		}
	}
	return recs, sum
}

// checkStatement uploads file as a gdv_0400 statement without insurerId and checks that its n
// entries all match, and that the statement's total, the sum of its entries (GET
// /commission-entries) and the total of GET /reports/commissions for its month equal sum to
// the cent.
func checkStatement(t *testing.T, env *apitest.Env, key string, file []byte, n int, sum decimal.Decimal) {
	t.Helper()
	st := mustUpload(t, env, key, map[string]string{"format": "gdv_0400"}, file)
	if st.ImportStatus != "processed" || st.EntryCount != n || st.MatchedCount != st.EntryCount {
		t.Fatalf("statement %s: %d entries, %d matched, want %d all matched; issues %+v", st.ImportStatus, st.EntryCount,
			st.MatchedCount, n, st.Issues)
	}
	if st.Total == nil || *st.Total != sum.StringFixed(2) {
		t.Fatalf("statement total %v, want the file's %s", st.Total, sum.StringFixed(2))
	}
	es := entries(t, env, key, "&statementId="+st.ID)
	got := decimal.Zero
	for _, e := range es {
		if e.ContractID == nil {
			t.Errorf("entry %s of line %d unmatched", e.PolicyNumber, e.Line)
		}
		got = got.Add(decimal.RequireFromString(e.Amount))
	}
	if len(es) != n || !got.Equal(sum) {
		t.Errorf("%d entries summing to %s, want %d summing to %s", len(es), got.StringFixed(2), n, sum.StringFixed(2))
	}
	if m := len(entries(t, env, key, "&statementId="+st.ID+"&matched=false")); m != 0 {
		t.Errorf("%d unmatched entries", m)
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
	rep := apitest.Get[report](t, env, key, "/reports/commissions?from=2025-01-01&to=2025-01-31&groupBy=insurer")
	if rep.Total != sum.StringFixed(2) || len(rep.Data) != 1 || rep.Data[0].Entries != n || rep.Data[0].Amount != rep.Total {
		t.Errorf("report %+v, want total %s in one row of %d entries", rep, sum.StringFixed(2), n)
	}
}
