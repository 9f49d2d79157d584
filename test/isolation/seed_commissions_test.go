package isolation

import (
	"bytes"
	"context"
	"database/sql"
	"mime/multipart"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/commissionentry"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// seedCommissionTables gives company c rows in every table of the commission area (issue
// 24): a statement through the API (its parse job does not run here), two entries of it as
// the app role pinned to c (one matched to the company's first contract, one unmatched: the
// two rows the visibility policy tells apart), and a liability rule through the operator role
// (the app role may only read rules).
func seedCommissionTables(t *testing.T, env *apitest.Env, c *apitest.Company) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("format", "csv")
	fw, _ := mw.CreateFormFile("file", "abrechnung.csv")
	_, _ = fw.Write([]byte("VSNR;Betrag;Buchungsdatum\nS-1;10,00;15.01.2025\n"))
	_ = mw.Close()
	r := env.Do(t, apitest.Request{Method: "POST", Path: "/commission-statements", Key: c.Secret, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if r.Status != 202 {
		t.Fatalf("seed commission statement: %d %s", r.Status, r.Body)
	}
	var st struct{ ID uuid.UUID }
	r.Decode(t, &st)
	booked := time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC)
	env.InCompany(t, c.ID, func(ctx context.Context, db *ent.Client) error {
		ct, err := db.Contract.Query().First(ctx)
		if err != nil {
			return err
		}
		if _, err := db.CommissionEntry.Create().SetStatementID(st.ID).SetInsurerID(ct.InsurerID).SetContractID(ct.ID).
			SetContactID(ct.ContactID).SetMatchedBy(commissionentry.MatchedByAuto).SetPolicyNumber(ct.PolicyNumber).
			SetPolicyKey(ct.PolicyNumber).SetType(commissionentry.TypeCommission).SetAmount(schematype.MustMoney("10.00")).
			SetBookedOn(booked).SetLine(2).Save(ctx); err != nil {
			return err
		}
		_, err = db.CommissionEntry.Create().SetStatementID(st.ID).SetPolicyNumber("UNBEKANNT").SetPolicyKey("UNBEKANNT").
			SetType(commissionentry.TypeCancellation).SetAmount(schematype.MustMoney("-2.50")).SetBookedOn(booked).SetLine(3).Save(ctx)
		return err
	})
	ctx := context.Background()
	if err := env.Operator(ctx, c.ID, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO commission_liability_rules (id, company_id, created_at, updated_at,
			contract_type, months) VALUES ($1, $2, now(), now(), '010', 60)`, uuid.Must(uuid.NewV7()), c.ID)
		return err
	}); err != nil {
		t.Fatalf("seed commission liability rule: %v", err)
	}
}
