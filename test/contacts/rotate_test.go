package contacts

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/datakeys"
	"github.com/brokerdesk/brokerdesk/ent/schematype"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// TestContacts_RotateData: rotation (`brokerdesk keys rotate-data`) re-seals every sensitive
// group under the first key of DATA_KEYS, which then opens them; a second run has nothing to do.
func TestContacts_RotateData(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.NewCompany(t)
	c, _ := create(t, env, a.Secret, anna())
	sealed := func() map[string]schematype.Sealed {
		var raw string
		if err := env.Pinned(context.Background(), a.ID, func(tx *sql.Tx) error {
			return tx.QueryRow(`SELECT sensitive::text FROM contacts WHERE id = $1`, c.ID).Scan(&raw)
		}); err != nil {
			t.Fatal(err)
		}
		var m map[string]schematype.Sealed
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if s := sealed(); s["bank"].KeyID != "app" || s["health"].KeyID != "app" {
		t.Fatalf("before: %+v", s)
	}
	keys := datakeys.MustParse("k2:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=," + datakeys.Derived([]byte(apitest.TestSecret)))
	owner, err := sql.Open("pgx", env.OwnerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	n, err := contacts.RotateData(context.Background(), owner, keys, 1)
	if err != nil || n < 1 {
		t.Fatalf("rotate: %d %v", n, err)
	}
	s := sealed()
	if s["bank"].KeyID != "k2" || s["health"].KeyID != "k2" {
		t.Fatalf("after: %+v", s)
	}
	k2 := datakeys.MustParse("k2:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	plain, err := k2.Open(s["bank"], []byte(a.ID.String()+"/"+c.ID+"/bank"))
	if err != nil || !strings.Contains(string(plain), iban) {
		t.Errorf("new key opens %q, %v", plain, err)
	}
	if n, err := contacts.RotateData(context.Background(), owner, keys, 1); err != nil || n != 0 {
		t.Errorf("second run: %d %v", n, err)
	}
}
