package portfolio

import (
	"bytes"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// TestPortfolio_Generated imports a generated file (valid 9999) with autoCommit.
func TestPortfolio_Generated(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	var file bytes.Buffer
	if _, err := gdv.Generate(&file, gdv.GenerateOptions{Contracts: 120, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	r := upload(t, env, co.Secret, map[string]string{"format": "gdv_vu_vermittler", "autoCommit": "true"}, "gen.gdv", file.Bytes())
	var tr transfer
	r.Decode(t, &tr)
	tr = await(t, env, co.Secret, tr.ID, "committed", "failed")
	if tr.Status != "committed" || tr.Progress.Created != 120 || tr.Summary.Packages[0].Check.Status != "consistent" {
		t.Errorf("got %+v", tr)
	}
}
