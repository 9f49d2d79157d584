package commissions

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent/schematype"
)

// TestLiabilityReportAppendJSON holds AppendJSON to encoding/json's bytes (what c.JSON sent
// before). Catches: a field renamed or reordered against the struct tags, null policy numbers
// written as "", a name with quotes, backslashes, control characters, HTML characters (which
// encoding/json escapes as \u003c…), non-ASCII or invalid UTF-8 written unescaped, an empty
// report's data written as null.
func TestLiabilityReportAppendJSON(t *testing.T) {
	names := []string{"", "Allianz Versicherungs-AG", "R+V", "Müller & Söhne <VVaG>", "a\"b\\c", "tab\there\n",
		"\x00\x1f", "\xff\xfe broken", "emoji 🙂", "\u2028line\u2029"}
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := range 50 {
		r := LiabilityReport{Data: []LiabilityRow{}, Total: schematype.MustMoney("0")}
		for range n {
			row := LiabilityRow{ContractID: uuid.New(), ContactID: uuid.New(), InsurerName: names[rnd.IntN(len(names))],
				OpenLiability:   schematype.MustMoney([]string{"0.01", "749.26", "1234567.80", "50.00"}[rnd.IntN(4)]),
				LiabilityEndsOn: "2029-03-15"}
			if rnd.IntN(3) > 0 {
				p := names[rnd.IntN(len(names))] + "HV-000.000.162"
				row.PolicyNumber = &p
			}
			r.Data = append(r.Data, row)
		}
		r.Total = schematype.MustMoney([]string{"0", "1415.60", "99999999.99"}[rnd.IntN(3)])
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("report of %d rows:\n got %s\nwant %s", n, got, want)
		}
	}
}
