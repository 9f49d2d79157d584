package commissions

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestStatements_Large: a 50,000-entry GDV statement (13 MB: past the 10 MiB of ordinary
// requests, so the upload must be streamed) is parsed, stored in batches and matched in one run
// (the issue's benchmark size), half of it matched, its total exact. The time is logged.
func TestStatements_Large(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 50,000-entry statement is left out")
	}
	t.Parallel()
	env := setup(t)
	a := env.NewCompany(t)
	ins := mustInsurer(t, env, a.Secret, "5501")
	for i := range 20 {
		mustContract(t, env, a.Secret, ins.ID, fmt.Sprintf("GR-%d", i), "")
	}
	const n = 50000
	recs := make([]string, 0, n)
	sum := decimal.Zero
	for i := range n {
		c := int64(i%997 + 1)
		soll := "40"
		if i%5 == 0 {
			c, soll = -c, "41"
		}
		recs = append(recs, inkasso(t, "5501", fmt.Sprintf("GR-%d", i%40), soll, "15012025", c))
		sum = sum.Add(decimal.New(c, -2))
	}
	file := gdvStatement(t, "5501", recs...)
	began := time.Now()
	st := mustUpload(t, env, a.Secret, map[string]string{"format": "gdv_0400"}, file)
	t.Logf("%d entries (%d MB) parsed and matched in %s", st.EntryCount, len(file)>>20, time.Since(began).Round(time.Millisecond))
	if st.ImportStatus != "processed" || st.EntryCount != n || st.MatchedCount != n/2 || *st.Total != sum.StringFixed(2) {
		t.Fatalf("statement %s %d entries %d matched total %v (want %s); error %v issues %+v", st.ImportStatus, st.EntryCount,
			st.MatchedCount, st.Total, sum.StringFixed(2), st.Error, st.Issues)
	}
}
