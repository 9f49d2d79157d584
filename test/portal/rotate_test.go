package portal

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/app/portal"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

// TestPortal_RotateData: `brokerdesk keys rotate-data` re-seals the portal's sealed values (a
// bank change request, a TOTP secret) under the first key of DATA_KEYS, which then opens them
// where the portal reads them; a second run has nothing to do. Catches a sealed column the
// rotation forgets: dropping the old key would lock the customer out of its second factor.
func TestPortal_RotateData(t *testing.T) {
	t.Parallel()
	w := signingtest.Setup(t)
	co := broker(t, w)
	cu := activeCustomer(t, w, co, "Rudi")
	cu.change(t, "bank", map[string]string{"iban": "DE89370400440532013000", "accountHolder": "Rudi Kunde"})
	old := datakeys.MustParse(datakeys.Derived([]byte(apitest.TestSecret)))
	// The TOTP secret as the security page stores it; its AAD names the access.
	var accessID string
	if err := w.Env.Pinned(context.Background(), co.ID, func(tx *sql.Tx) error {
		if err := tx.QueryRow(`SELECT id FROM portal_accesses WHERE contact_id = $1`, cu.contact).Scan(&accessID); err != nil {
			return err
		}
		totp := old.Seal([]byte("12345678901234567890"), []byte("portal-totp:"+co.ID.String()+"/"+accessID))
		b, _ := json.Marshal(totp)
		_, err := tx.Exec(`UPDATE portal_accesses SET totp_secret = $1 WHERE id = $2`, b, accessID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kid := func(q string) string {
		var raw []byte
		if err := w.Env.Pinned(context.Background(), co.ID, func(tx *sql.Tx) error {
			return tx.QueryRow(q, cu.contact).Scan(&raw)
		}); err != nil {
			t.Fatal(err)
		}
		var s schematype.Sealed
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return s.KeyID
	}
	const qTOTP = `SELECT totp_secret FROM portal_accesses WHERE contact_id = $1`
	const qBank = `SELECT sealed FROM portal_change_requests WHERE contact_id = $1 AND kind = 'bank'`
	if a, b := kid(qTOTP), kid(qBank); a != "app" || b != "app" {
		t.Fatalf("before: totp %q bank %q", a, b)
	}
	keys := datakeys.MustParse("k2:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=," + datakeys.Derived([]byte(apitest.TestSecret)))
	owner, err := sql.Open("pgx", w.Env.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if n, err := portal.RotateData(context.Background(), owner, keys, 1); err != nil || n < 2 {
		t.Fatalf("rotate: %d %v", n, err)
	}
	if a, b := kid(qTOTP), kid(qBank); a != "k2" || b != "k2" {
		t.Fatalf("after: totp %q bank %q", a, b)
	}
	// The new key alone opens the bank change by the AAD the portal reads it with.
	k2 := datakeys.MustParse("k2:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	var raw []byte
	var id string
	if err := w.Env.Pinned(context.Background(), co.ID, func(tx *sql.Tx) error {
		return tx.QueryRow(`SELECT id, sealed FROM portal_change_requests WHERE contact_id = $1 AND kind = 'bank'`,
			cu.contact).Scan(&id, &raw)
	}); err != nil {
		t.Fatal(err)
	}
	var s schematype.Sealed
	_ = json.Unmarshal(raw, &s)
	plain, err := k2.Open(s, []byte(co.ID.String()+"/portal_change_request/"+id))
	if err != nil || !strings.Contains(string(plain), "DE89370400440532013000") {
		t.Errorf("new key opens %q, %v", plain, err)
	}
	if n, err := portal.RotateData(context.Background(), owner, keys, 1); err != nil || n != 0 {
		t.Errorf("second run: %d %v", n, err)
	}
}
