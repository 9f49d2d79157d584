package isolation

import (
	"bytes"
	"context"
	"mime/multipart"
	"testing"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactimportrow"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedImportTables gives company c rows in both tables of contact imports (issue 25): an
// import through the API (its analysis job does not run here) and one row of it as the app
// role pinned to c, as the analysis would write it.
func seedImportTables(t *testing.T, env *apitest.Env, c *apitest.Company) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "kontakte.csv")
	_, _ = fw.Write([]byte("Vorname;Nachname;E-Mail\nAda;Lovelace;ada@example.test\n"))
	_ = mw.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/imports", Key: c.Secret, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if r.Status != 202 {
		t.Fatalf("seed contact import: %d %s", r.Status, r.Body)
	}
	var im struct{ ID uuid.UUID }
	r.Decode(t, &im)
	env.InCompany(t, c.ID, func(ctx context.Context, db *ent.Client) error {
		return db.ContactImportRow.Create().SetImportID(im.ID).SetRow(2).
			SetCells(map[string]string{"Vorname": "Ada", "Nachname": "Lovelace", "E-Mail": "ada@example.test"}).
			SetAnalysis(contactimportrow.AnalysisValid).SetErrors([]string{}).Exec(ctx)
	})
}
